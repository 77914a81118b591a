import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback-server.js';
import { jwtVerify, type CryptoKey, type KeyObject } from 'jose';

/**
 * Stand-in for the Gemini API (generativelanguage.googleapis.com/v1beta), Vertex AI
 * ({region}-aiplatform.googleapis.com/v1) and Google's OAuth token endpoint, speaking their
 * documented wire formats: `GenerateContentResponse` JSON, `alt=sse` streams (CRLF-framed
 * `data:` events, usage on the last one), `{ error: { code, message, status } }` bodies,
 * embedContent / batchEmbedContents / Vertex predict, and the JWT-bearer grant, whose
 * assertions are verified with the test's public key.
 */

export interface RecordedGoogleRequest {
  method: string;
  /** Path and query, e.g. '/v1beta/models/gemini-2.5-flash:generateContent'. */
  url: string;
  headers: IncomingHttpHeaders;
  json: any;
}

export type GoogleBehaviour =
  /** That status with Google's error body. */
  | { kind: 'error'; status: number; googleStatus: string; message: string }
  /** A 200 stream that sends `chunks` text events, then an `{ error }` event, then ends. */
  | { kind: 'stream-error'; chunks: number; googleStatus: string; message: string }
  /** Answers with one function call (and its thought signature, as Gemini 3 sends). */
  | { kind: 'function-call'; name: string; args: Record<string, unknown>; thoughtSignature?: string };

export interface MockGoogleOptions {
  /** Gemini API routes answer 400 API_KEY_INVALID unless `x-goog-api-key` is this. */
  apiKey?: string;
  /** Verifies token-endpoint assertions (RS256); without it the token endpoint is not served. */
  publicKey?: CryptoKey | KeyObject;
  /** The issued access token lifetime (default 3599, as Google answers). */
  tokenLifetimeSeconds?: number;
}

export interface MockGoogle {
  url: string;
  /** The token endpoint, for a service account's `token_uri`. */
  tokenUri: string;
  requests: RecordedGoogleRequest[];
  /** Token requests received (successful or not). */
  readonly tokenRequests: number;
  behave(next: GoogleBehaviour | null, options?: { times?: number }): void;
  close(): Promise<void>;
}

type Json = Record<string, any>;
const MODEL_VERSION = 'gemini-2.5-flash-001';
const GEMINI_ROUTE =
  /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|embedContent|batchEmbedContents)$/;
const VERTEX_ROUTE =
  /^\/v1\/projects\/([^/]+)\/locations\/([a-z0-9-]+)\/publishers\/google\/models\/([^/:]+):(generateContent|streamGenerateContent|predict)$/;

/** The reply text: predictable from the last user text, so tests can assert it. */
export function mockGoogleReply(lastUserText: string): string {
  return `Gemini says: ${lastUserText.length} chars.`;
}

export async function startMockGoogle(options: MockGoogleOptions = {}): Promise<MockGoogle> {
  const requests: RecordedGoogleRequest[] = [];
  const issuedTokens = new Set<string>();
  const issuedSignatures = new Set<string>();
  let tokenRequests = 0;
  let behaviour: GoogleBehaviour | null = null;
  let remaining: number | undefined;

  const take = (): GoogleBehaviour | null => {
    const current = behaviour;
    if (current && remaining !== undefined && --remaining <= 0) {
      behaviour = null;
      remaining = undefined;
    }
    return current;
  };

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => res.destroy());
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://mock');
    if (url.pathname === '/token' && options.publicKey) return token(raw.toString('utf8'), res);
    let json: Json;
    try {
      json = raw.length > 0 ? JSON.parse(raw.toString('utf8')) : {};
    } catch {
      return googleError(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
    }
    requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, json });

    const gemini = GEMINI_ROUTE.exec(url.pathname);
    const vertex = VERTEX_ROUTE.exec(url.pathname);
    if (!gemini && !vertex) return googleError(res, 404, 'NOT_FOUND', `Requested entity was not found.`);
    if (gemini && options.apiKey !== undefined && req.headers['x-goog-api-key'] !== options.apiKey) {
      return googleError(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');
    }
    if (vertex && !issuedTokens.has(String(req.headers.authorization ?? '').replace(/^Bearer /, ''))) {
      return googleError(
        res,
        401,
        'UNAUTHENTICATED',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      );
    }
    const method = (gemini?.[2] ?? vertex?.[4]) as string;
    if (method === 'embedContent' || method === 'batchEmbedContents' || method === 'predict')
      return send(res, 200, embed(method, json));

    const invalid = validateContents(json, Boolean(vertex));
    if (invalid) return googleError(res, 400, 'INVALID_ARGUMENT', invalid);
    const now = take();
    if (now?.kind === 'error') return googleError(res, now.status, now.googleStatus, now.message);
    const answer = answerFor(json, now);
    if (method === 'generateContent') return send(res, 200, final(answer, answer.parts));
    if (url.searchParams.get('alt') !== 'sse') return send(res, 200, answer.events); // JSON-array framing
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-content-type-options': 'nosniff' });
    const events = now?.kind === 'stream-error' ? answer.events.slice(0, now.chunks) : answer.events;
    for (const event of events) res.write(`data: ${JSON.stringify(event)}\r\n\r\n`);
    if (now?.kind === 'stream-error')
      res.write(
        `data: ${JSON.stringify({ error: { code: 500, message: now.message, status: now.googleStatus } })}\r\n\r\n`,
      );
    res.end();
  }

  /** A model turn: text words (one stream event each) or one function call. */
  function answerFor(json: Json, now: GoogleBehaviour | null) {
    const contents: Json[] = json.contents;
    const last = contents[contents.length - 1]!;
    const responses = last.parts.filter((p: Json) => p.functionResponse);
    let parts: Json[];
    if (now?.kind === 'function-call') {
      const part: Json = { functionCall: { name: now.name, args: now.args } };
      if (now.thoughtSignature) {
        part.thoughtSignature = now.thoughtSignature;
        issuedSignatures.add(now.thoughtSignature);
      }
      parts = [part];
    } else if (responses.length > 0) {
      parts = [
        {
          text: responses
            .map((p: Json) => `Tool ${p.functionResponse.name} said ${JSON.stringify(p.functionResponse.response)}.`)
            .join(' '),
        },
      ];
    } else {
      const text = last.parts.map((p: Json) => p.text ?? '').join('');
      parts = mockGoogleReply(text)
        .split(/(?= )/)
        .map((word) => ({ text: word }));
    }
    const promptTokens = Math.ceil(JSON.stringify(contents).length / 4);
    const usage = {
      promptTokenCount: promptTokens,
      candidatesTokenCount: parts.length,
      totalTokenCount: promptTokens + parts.length + 2,
      thoughtsTokenCount: 2,
      cachedContentTokenCount: 1,
    };
    const responseId = randomBytes(8).toString('hex');
    const events = parts.map((part, i) => {
      const event: Json = {
        candidates: [{ content: { parts: [part], role: 'model' }, index: 0 }],
        modelVersion: MODEL_VERSION,
        responseId,
      };
      if (i === parts.length - 1) {
        event.candidates[0].finishReason = 'STOP';
        event.usageMetadata = usage;
      } else
        event.usageMetadata = {
          promptTokenCount: promptTokens,
          candidatesTokenCount: i + 1,
          totalTokenCount: promptTokens + i + 1,
        };
      return event;
    });
    return { parts, usage, responseId, events };
  }

  function final(answer: ReturnType<typeof answerFor>, parts: Json[]) {
    const merged = parts.every((p) => typeof p.text === 'string')
      ? [{ text: parts.map((p) => p.text).join('') }]
      : parts;
    return {
      candidates: [{ content: { parts: merged, role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: answer.usage,
      modelVersion: MODEL_VERSION,
      responseId: answer.responseId,
    };
  }

  /** What the real API refuses, so that a wrong translation fails here too. */
  function validateContents(json: Json, vertex: boolean): string | null {
    if (!Array.isArray(json.contents) || json.contents.length === 0)
      return '* GenerateContentRequest.contents: contents is not specified';
    for (const content of json.contents) {
      if (content.role !== 'user' && content.role !== 'model') return `Please use a valid role: user, model.`;
      if (!Array.isArray(content.parts) || content.parts.length === 0)
        return 'Unable to submit request because it has an empty contents.parts field.';
      for (const part of content.parts) {
        if (part.fileData && vertex && !part.fileData.mimeType) return 'fileData.mimeType is required.';
        if (part.functionCall && issuedSignatures.size > 0 && !issuedSignatures.has(part.thoughtSignature)) {
          return 'Function call is missing a thought_signature in functionCall parts.';
        }
      }
    }
    return null;
  }

  function embed(method: string, json: Json) {
    const vector = (text: string, dims: number) =>
      Array.from({ length: dims }, (_, i) => ((text.length * 31 + i * 17) % 200) / 256 - 0.25);
    if (method === 'embedContent')
      return { embedding: { values: vector(json.content.parts[0].text, json.outputDimensionality ?? 8) } };
    if (method === 'batchEmbedContents')
      return {
        embeddings: json.requests.map((r: Json) => ({
          values: vector(r.content.parts[0].text, r.outputDimensionality ?? 8),
        })),
      };
    const dims = json.parameters?.outputDimensionality ?? 8;
    return {
      predictions: json.instances.map((i: Json) => ({
        embeddings: {
          statistics: { truncated: false, token_count: Math.ceil(i.content.length / 4) },
          values: vector(i.content, dims),
        },
      })),
      metadata: { billableCharacterCount: json.instances.reduce((n: number, i: Json) => n + i.content.length, 0) },
    };
  }

  async function token(form: string, res: ServerResponse) {
    tokenRequests += 1;
    const params = new URLSearchParams(form);
    const refuse = (description: string) => send(res, 400, { error: 'invalid_grant', error_description: description });
    if (params.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer')
      return send(res, 400, { error: 'unsupported_grant_type', error_description: 'Invalid grant_type.' });
    try {
      const { payload, protectedHeader } = await jwtVerify(params.get('assertion') ?? '', options.publicKey!, {
        algorithms: ['RS256'],
        audience: `${address}/token`,
      });
      if (
        protectedHeader.typ !== 'JWT' ||
        typeof payload.iss !== 'string' ||
        payload.scope !== 'https://www.googleapis.com/auth/cloud-platform'
      )
        return refuse('Invalid JWT: claims.');
      if (typeof payload.exp !== 'number' || typeof payload.iat !== 'number' || payload.exp - payload.iat > 3600)
        return refuse('Invalid JWT: Token must be a short-lived token (60 minutes).');
    } catch {
      return refuse('Invalid JWT Signature.');
    }
    const accessToken = `ya29.mock-${randomBytes(12).toString('hex')}`;
    issuedTokens.add(accessToken);
    return send(res, 200, {
      access_token: accessToken,
      expires_in: options.tokenLifetimeSeconds ?? 3599,
      token_type: 'Bearer',
    });
  }

  const loopback = await listenOnLoopback(server);
  const address = loopback.url;

  return {
    url: address,
    tokenUri: `${address}/token`,
    requests,
    get tokenRequests() {
      return tokenRequests;
    },
    behave(next, opts = {}) {
      behaviour = next;
      remaining = opts.times;
    },
    close: () => loopback.close(),
  };
}

function send(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=UTF-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function googleError(res: ServerResponse, code: number, status: string, message: string) {
  send(res, code, { error: { code, message, status } });
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
