import { connect } from 'node:net';
import OpenAI from 'openai';
import { Agent } from 'undici';
import { onTestFinished } from 'vitest';
import type { Clock } from '../../src/lib/clock.js';
import { startMockOpenAI, type MockOpenAI, type MockOpenAIOptions } from './mock-openai-upstream.js';
import { apiClient, type ApiClient } from './http.js';
import { startTestServer, type TestServer } from './start-test-server.js';

export interface GatewayHarness extends TestServer {
  mock: MockOpenAI;
  admin: ApiClient;
  /** The official OpenAI client pointed at the gateway, with the given gateway headers. */
  openai(headers?: Record<string, string>, options?: { apiKey?: string; maxRetries?: number }): OpenAI;
  /** Gateway headers that reach the mock through the custom-host credential mode. */
  viaMock: Record<string, string>;
  /** Request logs, once `count` records exist (the writer batches; reads flush it). */
  logs(count: number, query?: string): Promise<any[]>;
}

/** The real gateway plus a mock OpenAI provider on loopback, both stopped when the test ends. */
export async function startGateway(
  options: {
    mock?: MockOpenAIOptions;
    env?: Record<string, string>;
    routeAllHostsToMock?: boolean;
    clock?: Clock;
  } = {},
): Promise<GatewayHarness> {
  const mock = await startMockOpenAI(options.mock);
  onTestFinished(() => mock.close());
  // Sends every upstream connection, whatever its host, to the mock: lets tests check the URL
  // and auth a named provider is called with, without leaving the machine.
  const upstreamDispatcher = options.routeAllHostsToMock
    ? new Agent({
        connect: (_opts, callback) => {
          const socket = connect(Number(new URL(mock.url).port), '127.0.0.1');
          socket.once('connect', () => callback(null, socket));
          socket.once('error', (e) => callback(e, null));
        },
      })
    : undefined;
  const t = await startTestServer({
    ...(options.env ? { env: options.env } : {}),
    ...(upstreamDispatcher ? { upstreamDispatcher } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const admin = apiClient(t.baseUrl, t.adminKey);
  const viaMock = {
    'x-service-provider': 'openai',
    'x-service-custom-host': mock.baseUrl,
    authorization: 'Bearer provider-secret-key',
  };
  return {
    ...t,
    mock,
    admin,
    viaMock,
    openai: (headers = viaMock, opts = {}) =>
      new OpenAI({
        baseURL: `${t.baseUrl}/v1`,
        apiKey: opts.apiKey ?? 'provider-secret-key',
        maxRetries: opts.maxRetries ?? 0,
        defaultHeaders: { 'x-service-api-key': t.adminKey, ...headers },
      }),
    async logs(count: number, query = '') {
      for (let attempt = 0; attempt < 100; attempt++) {
        const res = await admin.get(`/v1/logs?page_size=1000${query ? `&${query}` : ''}`);
        if (res.body.data.length >= count) return res.body.data;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`expected ${count} log records`);
    },
  };
}

/** The Anthropic key the Anthropic mocks of these tests accept. */
export const ANTHROPIC_TEST_KEY = 'sk-ant-api03-test-key-0123456789';

/** Headers of a gateway request sent to an Anthropic endpoint on loopback (`url`) with that key. */
export function viaAnthropic(g: GatewayHarness, url: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-service-api-key': g.adminKey,
    'x-api-key': ANTHROPIC_TEST_KEY,
    'x-service-provider': 'anthropic',
    'x-service-custom-host': url,
  };
}
