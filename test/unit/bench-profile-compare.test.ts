import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { summariseCpuProfile } from '../../scripts/bench/cpuprofile.js';
import { compareProfiles, inclusiveTimes } from '../../scripts/bench/profile-compare.js';

const dir = mkdtempSync(join(tmpdir(), 'svcgw-profile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const frame = (id: number, functionName: string, url = '/app/dist/a.js', children: number[] = []) => ({
  id,
  callFrame: { functionName, url, lineNumber: id },
  children,
});

/** A profile of (root) → handle → check → handle (recursion) → parse, plus idle; one sample per [node, µs]. */
function profileFile(name: string, samples: Array<[number, number]>): string {
  const nodes = [
    frame(1, '(root)', '', [2, 6]),
    frame(2, 'handle', '/app/dist/a.js', [3]),
    frame(3, 'check', '/app/dist/b.js', [4]),
    frame(4, 'handle', '/app/dist/a.js', [5]),
    frame(5, 'parse', '', []),
    frame(6, '(idle)', '', []),
  ];
  // timeDeltas[i + 1] is the time spent in sample i.
  const file = join(dir, name);
  writeFileSync(
    file,
    JSON.stringify({ nodes, samples: samples.map(([id]) => id), timeDeltas: [0, ...samples.map(([, us]) => us)] }),
  );
  return file;
}

describe('bench profile comparison', () => {
  it('counts a function once per sample, recursion included, and leaves idle time out', () => {
    const times = inclusiveTimes(
      profileFile('a.cpuprofile', [
        [5, 30],
        [3, 10],
        [6, 1000],
      ]),
      '/app',
    );
    expect(times.busyUs).toBe(40);
    expect(times.byFunction.get('dist/a.js:handle')).toBe(40);
    expect(times.byFunction.get('dist/b.js:check')).toBe(40);
    expect(times.byFunction.get('parse')).toBe(30);
    expect(times.byFunction.has('(idle)')).toBe(false);
  });

  it('gives each function per request, the largest change first', () => {
    const before = inclusiveTimes(
      profileFile('before.cpuprofile', [
        [5, 300],
        [3, 100],
      ]),
      '/app',
    );
    const after = inclusiveTimes(profileFile('after.cpuprofile', [[3, 100]]), '/app');
    const rows = compareProfiles(before, after, { before: 100, after: 50 });
    expect(rows[0]).toEqual({ where: 'parse', before: 3, after: 0 });
    expect(rows.find((r) => r.where === 'dist/a.js:handle')).toEqual({
      where: 'dist/a.js:handle',
      before: 4,
      after: 2,
    });
    expect(compareProfiles(before, after, { before: 100, after: 50 }, /check/).map((r) => r.where)).toEqual([
      'dist/b.js:check',
    ]);
  });
});

describe('bench profile summary', () => {
  it('gives a sample the stage of its innermost frame that has one, and start-up all that runs under it', () => {
    const app = '/app/dist/src';
    const fastify = '/app/node_modules/fastify/lib';
    // The handler runs inside the content-type parser's callback, as the gateway's does.
    const nodes = [
      frame(1, '(root)', '', [2, 20]),
      frame(2, 'onEnd', `${fastify}/content-type-parser.js`, [3]),
      frame(3, '', `file://${app}/gateway/routes.js`, [4, 5]),
      frame(4, 'parse', '', []),
      frame(5, 'handler', `${fastify}/handle-request.js`, [6]),
      frame(6, 'handle', `file://${app}/gateway/handle-request.js`, [7]),
      frame(7, 'writeH1', '/app/node_modules/undici/lib/dispatcher/client-h1.js', [8]),
      frame(8, 'writev', '', []),
      frame(20, 'run', 'node:internal/modules/esm/module_job', [21]),
      frame(21, 'object', '/app/node_modules/zod/v4/core/core.js', []),
    ];
    const samples: Array<[number, number]> = [
      [4, 10],
      [6, 20],
      [8, 40],
      [5, 5],
      [21, 7],
    ];
    const file = join(dir, 'stages.cpuprofile');
    writeFileSync(
      file,
      JSON.stringify({ nodes, samples: samples.map(([id]) => id), timeDeltas: [0, ...samples.map(([, us]) => us)] }),
    );
    const stages = Object.fromEntries(summariseCpuProfile(file, '/app').stages.map((s) => [s.where, s.selfMs * 1000]));
    expect(stages).toEqual({
      'request body JSON.parse (content-type parser)': 10,
      'other gateway code (handle-request)': 20,
      'upstream call: undici': 40,
      'fastify routing, hooks, request objects': 5,
      'start-up (module loading, migrations)': 7,
    });
  });
});
