import type { IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import type { LoadTarget } from './load.js';
import type { Kind, Via } from './report.js';

/**
 * What `npm run bench` and `npm run soak` set up on a fresh gateway and send to it: issue #19's
 * configuration (a workspace key, a rate-limits and a usage-limits policy, request logs on),
 * and the requests with the checks that tell a good answer.
 */

const MESSAGES = [{ role: 'user', content: 'hello' }];

/**
 * Five built-in checks on every request, none with network: what a typical "keep prompts sane"
 * guardrail looks like. All pass on the bench's prompt, so the answer is a 200 with hook_results.
 */
export const GUARDED_CONFIG = {
  input_guardrails: [
    {
      'default.contains': { operator: 'none', words: ['password', 'secret'] },
      'default.wordCount': { minWords: 1, maxWords: 2000 },
      'default.regexMatch': { rule: 'sk-[A-Za-z0-9]{20,}', not: true },
      'default.characterCount': { minCharacters: 1, maxCharacters: 20000 },
      'default.pii': { categories: ['EMAIL_ADDRESS', 'PHONE_NUMBER', 'CREDIT_CARD'] },
      deny: true,
    },
  ],
};

export interface Endpoints {
  mockUrl: string;
  gatewayUrl: string;
  /** The do-nothing proxy in front of the mock (bench only). */
  proxyUrl?: string;
  /** The key gateway requests carry: a workspace key unless `--no-limits`' admin-key set-up asks otherwise. */
  gatewayKey: string;
}

/** The same chat completion for every path, and how to tell its answer is the right one. */
export function targetsFor(kind: Kind, e: Endpoints): Record<Via, LoadTarget> {
  const stream = kind === 'stream';
  const json = { 'content-type': 'application/json' };
  const viaGateway: LoadTarget = {
    origin: e.gatewayUrl,
    path: '/v1/chat/completions',
    headers: {
      ...json,
      'x-service-api-key': e.gatewayKey,
      'x-service-provider': 'openai',
      authorization: 'Bearer test',
      'x-service-custom-host': `${e.mockUrl}/v1`,
    },
    body: JSON.stringify({ model: 'gpt-4o', messages: MESSAGES, ...(stream ? { stream: true } : {}) }),
    stream,
    // The usage-only chunk the gateway asked for is not passed on to a client that did not ask.
    check: stream
      ? (text) => text.endsWith('data: [DONE]\n\n') && !text.includes('"choices":[]')
      : (text) => text.includes('"chat.completion"'),
  };
  const direct: LoadTarget = {
    origin: e.mockUrl,
    path: '/v1/chat/completions',
    headers: { ...json, authorization: 'Bearer test' },
    // The gateway asks streams for usage on the client's behalf; the direct run asks the same.
    body: JSON.stringify({
      model: 'gpt-4o',
      messages: MESSAGES,
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    }),
    stream,
    check: stream
      ? (text) => text.endsWith('data: [DONE]\n\n') && text.includes('"usage":{')
      : (text) => text.includes('"chat.completion"'),
  };
  return {
    direct,
    // The proxy forwards the direct request byte for byte, so it gets the direct body and checks.
    proxy: { ...direct, origin: e.proxyUrl ?? e.mockUrl },
    gateway: viaGateway,
    guarded: {
      ...viaGateway,
      headers: { ...viaGateway.headers, 'x-service-config': JSON.stringify(GUARDED_CONFIG) },
      // Every check passed: the answer carries the results (a stream, in its verdict event).
      check: (text, headers) => viaGateway.check(text, headers) && text.includes('"before_request_hooks":[{'),
    },
    fallback: {
      ...viaGateway,
      headers: { ...viaGateway.headers, 'x-service-config': JSON.stringify(fallbackConfig(e.mockUrl)) },
      // The first target answers, as it does on a good day: the row shows what the config costs.
      check: (text, headers) => viaGateway.check(text, headers) && headers['x-service-target'] === 'primary',
    },
    cached: {
      ...viaGateway,
      headers: { ...viaGateway.headers, 'x-service-config': JSON.stringify(CACHED_CONFIG) },
      // After the preflight stored it, every answer comes from the cache.
      check: (text, headers) => viaGateway.check(text, headers) && headers['x-service-cache-status'] === 'HIT',
    },
  };
}

/** A fallback of two targets, both the mock provider (the request's own `Authorization` is sent). */
export function fallbackConfig(mockUrl: string): Record<string, unknown> {
  const target = (name: string) => ({ name, provider: 'openai', custom_host: `${mockUrl}/v1` });
  return { strategy: { mode: 'fallback' }, targets: [target('primary'), target('secondary')] };
}

/** The simple response cache; the headers still name the provider and the mock's host. */
export const CACHED_CONFIG = { cache: { mode: 'simple', max_age: 3600 } };

async function adminPost(baseUrl: string, adminKey: string, path: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'x-service-api-key': adminKey, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`could not create ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** A workspace service key of the default workspace that may only call the gateway: what an application holds. */
export async function createWorkspaceKey(baseUrl: string, adminKey: string): Promise<string> {
  const created = (await adminPost(baseUrl, adminKey, '/v1/api-keys/workspace/service', {
    name: 'bench',
    workspace_id: 'default',
    scopes: ['completions.write'],
  })) as { key?: unknown };
  if (typeof created.key !== 'string') throw new Error('the created workspace key came back without its key');
  return created.key;
}

/**
 * "With auth, limits and logging all on": a rate-limits policy and a usage-limits policy that
 * cover every bench request (high enough never to refuse one), so that each request pays for
 * the rate check, the budget reservation and its settlement.
 */
export async function enableLimits(baseUrl: string, adminKey: string): Promise<void> {
  const common = {
    workspace_id: 'default',
    conditions: [{ key: 'workspace_id', value: 'default' }],
    group_by: [{ key: 'api_key' }],
  };
  await adminPost(baseUrl, adminKey, '/v1/policies/rate-limits', {
    ...common,
    name: 'bench rate limit',
    type: 'requests',
    unit: 'rpm',
    value: 1e12,
  });
  await adminPost(baseUrl, adminKey, '/v1/policies/usage-limits', {
    ...common,
    name: 'bench budget',
    type: 'cost',
    credit_limit: 1e9,
  });
}

/** One request before any load: a broken set-up fails here, clearly, not as minutes of errors. */
export async function preflight(name: string, target: LoadTarget): Promise<void> {
  const { status, text, headers } = await sendOnce(target);
  if (status !== 200 || !target.check(text, headers))
    throw new Error(`preflight ${name} failed: ${status}: ${text.slice(0, 500)}`);
}

/** Sends the request until the cache answers it (the first answer is stored on its way out). */
export async function primeCache(name: string, target: LoadTarget): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const { status, headers } = await sendOnce(target);
    if (status === 200 && headers['x-service-cache-status'] === 'HIT') return;
    await sleep(50);
  }
  throw new Error(`${name}: the cache did not answer the same request again`);
}

async function sendOnce(target: LoadTarget): Promise<{ status: number; text: string; headers: IncomingHttpHeaders }> {
  const res = await request(`${target.origin}${target.path}`, {
    method: 'POST',
    headers: target.headers,
    body: target.body,
  });
  return { status: res.statusCode, text: await res.body.text(), headers: res.headers };
}

/** This environment without SVCGW_* settings, so a developer's own settings do not change the figures. */
export function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVCGW_') && v !== undefined) env[k] = v;
  return env;
}
