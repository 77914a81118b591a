import { performance } from 'node:perf_hooks';
import type { AgentCard } from '@a2a-js/sdk';
import { fetch as undiciFetch, type Dispatcher } from 'undici';

/** What reading an agent's card gave: the card (in the 1.0 shape), or why there is none. */
export type CardRead =
  | { ok: true; status: number; elapsedMs: number; card: AgentCard; json: string }
  | { ok: false; status: number | null; elapsedMs: number; error: string };

export interface CardReadOptions {
  timeoutMs: number;
  /** The pooled upstream client (tests route it); undici's global one otherwise. */
  dispatcher?: Dispatcher;
  maxBytes?: number;
}

const MAX_CARD_BYTES = 1024 * 1024;

// The A2A SDK is loaded when the first card is read, not by every server.
let sdk: Promise<[typeof import('@a2a-js/sdk'), typeof import('@a2a-js/sdk/client')]> | undefined;
const loadSdk = () => (sdk ??= Promise.all([import('@a2a-js/sdk'), import('@a2a-js/sdk/client')]));

/**
 * Reads an agent's card with the A2A SDK's card resolver, which asks for the 1.0 card and turns
 * a 0.3 card (from an agent that only speaks 0.3) into the 1.0 shape. The integration's
 * credentials go with the request; the answer is read up to `maxBytes`.
 */
export async function readAgentCard(
  target: { cardUrl: string; headers: Record<string, string> },
  options: CardReadOptions,
): Promise<CardRead> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let status: number | null = null;
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const response = await undiciFetch(String(input instanceof Request ? input.url : input), {
      method: 'GET',
      headers: {
        ...(init?.headers as Record<string, string> | undefined),
        ...target.headers,
        accept: 'application/json',
      },
      signal: AbortSignal.timeout(options.timeoutMs),
      redirect: 'manual',
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    status = response.status;
    const body = await limitedText(response.body, options.maxBytes ?? MAX_CARD_BYTES);
    return new Response(body, { status: response.status, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  try {
    const [{ AgentCard: cardCodec }, { DefaultAgentCardResolver }] = await loadSdk();
    const resolver = new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } });
    const card = await resolver.resolve(target.cardUrl, '');
    if (typeof card?.name !== 'string' || card.name.length === 0)
      return { ok: false, status, elapsedMs: elapsed(), error: 'The answer is not an agent card (it has no name).' };
    return {
      ok: true,
      status: status ?? 200,
      elapsedMs: elapsed(),
      card,
      json: JSON.stringify(cardCodec.toJSON(card)),
    };
  } catch (error) {
    return { ok: false, status, elapsedMs: elapsed(), error: describe(error, status) };
  }
}

async function limitedText(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<string> {
  if (!body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new CardTooLarge(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

class CardTooLarge extends Error {
  constructor(maxBytes: number) {
    super(`The card is larger than ${maxBytes} bytes.`);
  }
}

/** A sentence for the sync status: never the credentials, never a stack. */
function describe(error: unknown, status: number | null): string {
  if (error instanceof CardTooLarge) return error.message;
  if (error instanceof SyntaxError) return 'The card is not valid JSON.';
  if (status !== null && status >= 300) return `The card could not be read: the agent answered HTTP ${status}.`;
  const name = (error as { name?: unknown }).name;
  if (name === 'TimeoutError' || name === 'AbortError') return 'The agent did not answer in time.';
  const cause = (error as { cause?: { code?: unknown } }).cause;
  const code = typeof cause?.code === 'string' ? ` (${cause.code})` : '';
  return `The agent could not be reached${code}.`;
}
