import { createServer } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { listenOnLoopback } from '../../helpers/loopback-server.js';
import { answerContext, runOne } from './context.js';

const open = { allowPrivateContentUrls: true, allowPrivateCheckEndpoints: false };

describe('default.validUrls', () => {
  it('passes when every URL answers, fails on a 404 or a private host, and `not` inverts', async () => {
    const s = await listenOnLoopback(createServer((req, res) => res.writeHead(req.url === '/ok' ? 200 : 404).end()));
    onTestFinished(() => s.close());
    const good = answerContext(`See ${s.url}/ok.`, { server: open });
    expect(await runOne('default.validUrls', {}, good)).toMatchObject({
      verdict: true,
      data: { urls: 1, invalid: [] },
    });
    const bad = answerContext(`See ${s.url}/ok and ${s.url}/gone`, { server: open });
    expect(await runOne('default.validUrls', {}, bad)).toMatchObject({
      verdict: false,
      data: { invalid: [`${s.url}/gone`] },
    });
    expect((await runOne('default.validUrls', { not: true }, bad)).verdict).toBe(true);
    expect((await runOne('default.validUrls', {}, answerContext(`See ${s.url}/ok`))).verdict).toBe(false);
    expect(
      (await runOne('default.validUrls', { onlyDNS: true }, answerContext('See http://localhost:1/x'))).verdict,
    ).toBe(true);
    expect((await runOne('default.validUrls', {}, answerContext('No links.'))).verdict).toBe(true);
  });
});
