import { createServer } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { checkParameterProblem } from '../../../src/guardrails/registry.js';
import type { GuardrailServerOptions } from '../../../src/guardrails/types.js';
import { listenOnLoopback } from '../../helpers/loopback-server.js';
import { chatContext, runOne } from './context.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

/** An image host: /cat.png, /big.png (declared size), /stream.png (chunked), /page.html, /hop (redirect to `hopTo`). */
async function startImages(hopTo = () => '/cat.png') {
  let hits = 0;
  const s = await listenOnLoopback(
    createServer((req, res) => {
      hits++;
      if (req.url === '/cat.png') res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
      else if (req.url === '/big.png')
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': '5000' }).end(Buffer.alloc(5000));
      else if (req.url === '/stream.png') {
        res.writeHead(200, { 'content-type': 'image/png' });
        for (let i = 0; i < 10; i++) res.write(Buffer.alloc(500));
        res.end();
      } else if (req.url === '/page.html') res.writeHead(200, { 'content-type': 'text/html' }).end('<p>');
      else if (req.url === '/hop') res.writeHead(302, { location: hopTo() }).end();
      else res.writeHead(404).end();
    }),
  );
  onTestFinished(() => s.close());
  return { url: s.url, hits: () => hits };
}

function imageRequest(url: string, server: GuardrailServerOptions) {
  return chatContext('', {
    server,
    request: {
      json: {
        model: 'gpt-4o',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image_url', image_url: { url, detail: 'low' } },
            ],
          },
        ],
      },
      headers: {},
    },
  });
}

const open: GuardrailServerOptions = { allowPrivateContentUrls: true, allowPrivateCheckEndpoints: false };
const closed: GuardrailServerOptions = { allowPrivateContentUrls: false, allowPrivateCheckEndpoints: false };
const sentUrl = (request: unknown) => (request as any).messages[0].content[1].image_url;

describe('default.inlineImageUrls', () => {
  it('refuses 127.0.0.1 by default: the request goes on unchanged, or fails with failOnError', async () => {
    const images = await startImages();
    const lenient = await runOne('default.inlineImageUrls', {}, imageRequest(`${images.url}/cat.png`, closed));
    expect(lenient).toMatchObject({ verdict: true, transformed: false, data: { inlined: 0 } });
    expect(lenient.error).toMatch(/127\.0\.0\.1 is a private address/);
    const strict = await runOne(
      'default.inlineImageUrls',
      { failOnError: true },
      imageRequest(`${images.url}/cat.png`, closed),
    );
    expect(strict.verdict).toBe(false);
    expect(images.hits()).toBe(0);
  });

  it('inlines the image as base64 with the private-host setting on', async () => {
    const images = await startImages();
    const result = await runOne('default.inlineImageUrls', {}, imageRequest(`${images.url}/cat.png`, open));
    expect(result).toMatchObject({ verdict: true, transformed: true, data: { inlined: 1, failed: [] } });
    expect(sentUrl(result.outcome.request)).toEqual({
      url: `data:image/png;base64,${PNG.toString('base64')}`,
      detail: 'low',
    });
  });

  it('follows a redirect between allowed hosts but not from an allowed host into a private one', async () => {
    const target = await startImages();
    const images = await startImages(() => `${target.url}/cat.png`);
    const allowOnlyFirst: GuardrailServerOptions = { ...closed, privateHostAllowlist: [new URL(images.url).host] };
    const refused = await runOne(
      'default.inlineImageUrls',
      { failOnError: true },
      imageRequest(`${images.url}/hop`, allowOnlyFirst),
    );
    expect(refused.verdict).toBe(false);
    expect(refused.error).toMatch(/private address/);
    expect(target.hits()).toBe(0);
    const followed = await runOne('default.inlineImageUrls', {}, imageRequest(`${images.url}/hop`, open));
    expect(followed.data).toMatchObject({ inlined: 1 });
    expect(target.hits()).toBe(1);
  });

  it('caps the size, declared or streamed, and refuses what is not an image', async () => {
    const images = await startImages();
    for (const path of ['/big.png', '/stream.png']) {
      const result = await runOne(
        'default.inlineImageUrls',
        { maxSizeBytes: 1000, failOnError: true },
        imageRequest(`${images.url}${path}`, open),
      );
      expect(result.verdict).toBe(false);
      expect(result.error).toMatch(/more than 1000/);
    }
    const html = await runOne(
      'default.inlineImageUrls',
      { failOnError: true },
      imageRequest(`${images.url}/page.html`, open),
    );
    expect(html.error).toMatch(/not an image/);
  });

  it('applies only to the providers listed and inlines Anthropic url sources', async () => {
    const images = await startImages();
    const other = await runOne(
      'default.inlineImageUrls',
      { providers: ['bedrock'] },
      imageRequest(`${images.url}/cat.png`, open),
    );
    expect(other).toMatchObject({ verdict: true, transformed: false });
    const anthropic = chatContext('', {
      endpoint: 'messages',
      provider: 'anthropic',
      server: open,
      request: {
        json: {
          model: 'claude',
          messages: [
            { role: 'user', content: [{ type: 'image', source: { type: 'url', url: `${images.url}/cat.png` } }] },
          ],
        },
        headers: {},
      },
    });
    const result = await runOne('default.inlineImageUrls', { providers: ['anthropic'] }, anthropic);
    expect((result.outcome.request as any).messages[0].content[0].source).toEqual({
      type: 'base64',
      media_type: 'image/png',
      data: PNG.toString('base64'),
    });
  });

  it('validates its parameters', () => {
    expect(checkParameterProblem('default.inlineImageUrls', { maxSizeBytes: 0 })).toMatchObject({
      param: 'maxSizeBytes',
    });
    expect(checkParameterProblem('default.inlineImageUrls', { timeoutMs: 'slow' })).toMatchObject({
      param: 'timeoutMs',
    });
    expect(checkParameterProblem('default.inlineImageUrls', {})).toBeNull();
  });
});
