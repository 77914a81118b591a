import { createServer } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { isPrivateAddress } from '../../../src/guardrails/net/address-policy.js';
import { guardedFetch, isRefusal } from '../../../src/guardrails/net/guarded-fetch.js';
import { listenOnLoopback } from '../../helpers/loopback-server.js';

describe('isPrivateAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.20.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b::a9fe:a9fe',
    '2002:c0a8:0101::1',
  ])('refuses %s', (address) => expect(isPrivateAddress(address)).toBe(true));

  it.each(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) =>
    expect(isPrivateAddress(address)).toBe(false),
  );
});

describe('guardedFetch', () => {
  async function server() {
    let hits = 0;
    const s = await listenOnLoopback(
      createServer((_req, res) => {
        hits++;
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      }),
    );
    onTestFinished(() => s.close());
    return { url: s.url, hits: () => hits };
  }

  it('refuses a private literal and a name that resolves to one, before connecting', async () => {
    const { url, hits } = await server();
    const signal = new AbortController().signal;
    await expect(guardedFetch(url, { allowPrivate: false, signal })).rejects.toThrow(
      /127\.0\.0\.1 is a private address/,
    );
    const byName = url.replace('127.0.0.1', 'localhost');
    const refused = await guardedFetch(byName, { allowPrivate: false, signal }).catch((e: unknown) => e);
    expect(isRefusal(refused)).toBe(true);
    expect(hits()).toBe(0);
    expect((await guardedFetch(url, { allowPrivate: true, signal })).body.toString()).toBe('ok');
    expect(hits()).toBe(1);
  });

  it('reaches an allow-listed host and nothing else', async () => {
    const { url } = await server();
    const other = await server();
    const signal = new AbortController().signal;
    const allowHosts = [new URL(url).host];
    expect((await guardedFetch(url, { allowPrivate: false, allowHosts, signal })).status).toBe(200);
    await expect(guardedFetch(other.url, { allowPrivate: false, allowHosts, signal })).rejects.toThrow(
      /private address/,
    );
  });

  it('refuses non-http schemes and URLs with credentials', async () => {
    const signal = new AbortController().signal;
    await expect(guardedFetch('file:///etc/passwd', { allowPrivate: true, signal })).rejects.toThrow(/only http/);
    await expect(guardedFetch('http://u:p@example.com/', { allowPrivate: true, signal })).rejects.toThrow(
      /credentials/,
    );
  });
});
