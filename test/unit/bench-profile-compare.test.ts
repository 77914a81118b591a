import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
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
