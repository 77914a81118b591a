import { expect } from 'vitest';
import type { ApiClient } from './http.js';

/** An agent integration for the A2A peer, with its bearer token, usable in every workspace. */
export async function createAgentIntegration(
  admin: ApiClient,
  agentUrl: string,
  overrides: Record<string, unknown> = {},
): Promise<{ id: string; slug: string; sync_status: string }> {
  const res = await admin.post('/v1/agent-integrations', {
    name: 'Echo agent',
    url: agentUrl,
    auth_type: 'bearer',
    configurations: { bearer_token: 'peer-secret' },
    global_workspace_access: true,
    ...overrides,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

export async function createAgentServer(
  client: ApiClient,
  body: Record<string, unknown>,
): Promise<{ id: string; slug: string; url: string; card_url: string; workspace_id: string }> {
  const res = await client.post('/v1/agent-servers', { name: 'Echo', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** A JSON-RPC request body. */
export const rpc = (method: string, params: unknown, id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});

/** An A2A 0.3 message (the `message/send` and `message/stream` shape). */
export const message03 = (text: string, metadata?: Record<string, unknown>) => ({
  message: {
    kind: 'message',
    role: 'user',
    messageId: `m-${Math.random().toString(36).slice(2)}`,
    parts: [{ kind: 'text', text }],
    ...(metadata ? { metadata } : {}),
  },
});

/** Reads server-sent events from a fetch response one at a time, as they arrive. */
export function sseEvents(response: Response) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    /** The next event's parsed data, or null once the stream has ended. */
    async next(): Promise<any> {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = event
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trim())
            .join('\n');
          if (data) return JSON.parse(data);
          continue;
        }
        const { done, value } = await reader.read();
        if (done) return null;
        buffer += decoder.decode(value, { stream: true });
      }
    },
    cancel: () => reader.cancel(),
  };
}
