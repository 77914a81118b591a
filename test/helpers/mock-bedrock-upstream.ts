import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback-server.js';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { Hash } from '@smithy/core/serde';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * A stand-in for the Bedrock runtime and agent-runtime hosts on loopback. It checks every
 * request the way AWS does: the SigV4 signature is recomputed (with @smithy/signature-v4, from
 * the known test credentials and the bytes, headers and Host that actually arrived) and a
 * mismatch gets AWS's 403 `InvalidSignatureException`; a bearer token must be a known Bedrock
 * API key. Answers follow the documented wire formats: Converse JSON, ConverseStream as binary
 * `application/vnd.amazon.eventstream` frames (encoded with @smithy's codec), InvokeModel
 * embeddings for Titan and Cohere, Agent Runtime Rerank, and `{message}` errors named in the
 * `x-amzn-errortype` header.
 */

export interface MockAwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface RecordedBedrockRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  json?: any;
}

export type BedrockBehaviour =
  /** An AWS error: `{message}` with `x-amzn-errortype: <errorType>:…`. */
  | { kind: 'error'; status: number; errorType: string; message: string }
  /** A ConverseStream that sends a few text deltas, then an exception frame. */
  | { kind: 'stream-exception'; exceptionType: string; message: string };

export interface MockBedrock {
  url: string;
  requests: RecordedBedrockRequest[];
  behave(next: BedrockBehaviour | null): void;
  close(): Promise<void>;
}

type Json = Record<string, any>;
interface Reply {
  status: number;
  headers?: Record<string, string>;
  json?: unknown;
  frames?: Buffer[];
}

const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => new Uint8Array(Buffer.from(text, 'utf8')),
);
const AUTH_RE =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;
const ERROR_NAMESPACE = 'http://internal.amazon.com/coral/com.amazon.coral.service/';
const SIGNATURE_MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

/** The text every Converse answer starts with, so tests can predict it. */
export const BEDROCK_REPLY = 'Hello from Bedrock';

export async function startMockBedrock(options: {
  credentials: MockAwsCredentials[];
  apiKeys?: string[];
}): Promise<MockBedrock> {
  const requests: RecordedBedrockRequest[] = [];
  let behaviour: BedrockBehaviour | null = null;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    const url = req.url ?? '/';
    let json: any;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      json = undefined;
    }
    requests.push({ method: req.method ?? 'GET', url, headers: req.headers, body, json });
    const denied = await authenticate(req, url, body, options);
    if (denied) return send(res, denied);
    if (behaviour?.kind === 'error')
      return send(res, awsError(behaviour.status, behaviour.errorType, behaviour.message));
    const path = url.split('?', 1)[0]!;
    const model = /^\/model\/([^/]+)\/(converse|converse-stream|invoke)$/.exec(path);
    if (req.method === 'POST' && model) {
      const modelId = decodeURIComponent(model[1]!);
      if (model[2] === 'converse') return send(res, { status: 200, json: converseAnswer(json) });
      if (model[2] === 'converse-stream') return send(res, { status: 200, frames: converseStream(json, behaviour) });
      return send(res, { status: 200, json: embeddingAnswer(modelId, json) });
    }
    if (req.method === 'POST' && path === '/rerank') return send(res, { status: 200, json: rerankAnswer(json) });
    return send(
      res,
      awsError(404, 'UnknownOperationException', 'The requested operation is not recognized by the service.'),
    );
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) =>
      send(res, awsError(500, 'InternalServerException', `mock failure: ${String(error)}`)),
    );
  });
  const loopback = await listenOnLoopback(server);
  return {
    url: loopback.url,
    requests,
    behave(next) {
      behaviour = next;
    },
    close: () => loopback.close(),
  };
}

/** Null when the request is properly authenticated, else AWS's 403 answer. */
async function authenticate(
  req: IncomingMessage,
  url: string,
  body: Buffer,
  options: { credentials: MockAwsCredentials[]; apiKeys?: string[] },
): Promise<Reply | null> {
  const authorization = req.headers.authorization ?? '';
  if (authorization.startsWith('Bearer ')) {
    return (options.apiKeys ?? []).includes(authorization.slice(7))
      ? null
      : awsError(403, 'AccessDeniedException', 'Authentication failed: the API key is not valid.');
  }
  const match = AUTH_RE.exec(authorization);
  if (!match) return awsError(403, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
  const [, accessKeyId, , region, service, signedHeaders, signature] = match;
  const known = options.credentials.find((c) => c.accessKeyId === accessKeyId);
  const token = header(req.headers, 'x-amz-security-token');
  if (!known || (known.sessionToken ?? undefined) !== token)
    return awsError(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
  const names = signedHeaders!.split(';');
  if (!names.includes('host') || !names.includes('x-amz-date'))
    return awsError(403, 'InvalidSignatureException', SIGNATURE_MISMATCH);
  const headers: Record<string, string> = {};
  for (const name of names) headers[name] = header(req.headers, name) ?? '';
  const amzDate = headers['x-amz-date']!;
  const signingDate = new Date(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
  const [path, rawQuery = ''] = url.split('?', 2) as [string, string?];
  const signer = new SignatureV4({
    credentials: {
      accessKeyId: known.accessKeyId,
      secretAccessKey: known.secretAccessKey,
      ...(token ? { sessionToken: token } : {}),
    },
    region: region!,
    service: service!,
    sha256: Hash.bind(null, 'sha256'),
    applyChecksum: false,
  });
  const signed = await signer.sign(
    {
      method: req.method ?? 'GET',
      protocol: 'http:',
      hostname: '127.0.0.1',
      path,
      query: Object.fromEntries(new URLSearchParams(rawQuery)),
      headers,
      body: new Uint8Array(body),
    },
    { signingDate, signingRegion: region!, signingService: service! },
  );
  const expected = String(signed.headers.authorization ?? '');
  return expected.endsWith(`SignedHeaders=${signedHeaders}, Signature=${signature}`)
    ? null
    : awsError(403, 'InvalidSignatureException', SIGNATURE_MISMATCH);
}

function awsError(status: number, errorType: string, message: string): Reply {
  return { status, headers: { 'x-amzn-errortype': `${errorType}:${ERROR_NAMESPACE}` }, json: { message } };
}

function lastUserBlocks(json: Json): Json[] {
  const users = (json?.messages ?? []).filter((m: Json) => m.role === 'user');
  return users.length > 0 ? users[users.length - 1].content : [];
}

/** What the mock says: a tool call when tools are offered and none answered yet, else text about the input. */
function plan(json: Json): { text: string; toolUse: Json | null } {
  const blocks = lastUserBlocks(json);
  const result = blocks.find((b) => b.toolResult)?.toolResult;
  if (result) return { text: `${BEDROCK_REPLY}: the tool said ${result.content?.[0]?.text ?? ''}`, toolUse: null };
  const tool = json?.toolConfig?.tools?.[0]?.toolSpec;
  if (tool) return { text: '', toolUse: { toolUseId: 'tooluse_mock0001', name: tool.name, input: { city: 'Paris' } } };
  const image = blocks.find((b) => b.image)?.image;
  if (image)
    return {
      text: `${BEDROCK_REPLY}: I see a ${image.format} image of ${Buffer.from(image.source.bytes, 'base64').length} bytes.`,
      toolUse: null,
    };
  const text = blocks
    .filter((b) => typeof b.text === 'string')
    .map((b) => b.text)
    .join('');
  return { text: `${BEDROCK_REPLY}: ${text.length} chars.`, toolUse: null };
}

const USAGE = (output: number) => ({
  inputTokens: 12,
  outputTokens: output,
  totalTokens: 12 + output + 5,
  cacheReadInputTokens: 5,
});

function converseAnswer(json: Json): Json {
  const { text, toolUse } = plan(json);
  const content = toolUse ? [{ toolUse }] : [{ text }];
  const output = text.split(' ').length;
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: toolUse ? 'tool_use' : 'end_turn',
    usage: USAGE(output),
    metrics: { latencyMs: 42 },
  };
}

function frame(eventType: string, payload: Json, messageType = 'event'): Buffer {
  const typeHeader = messageType === 'exception' ? ':exception-type' : ':event-type';
  const bytes = codec.encode({
    headers: {
      [typeHeader]: { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: messageType },
    },
    body: new Uint8Array(Buffer.from(JSON.stringify({ ...payload, p: 'abcdefghijklmnop' }), 'utf8')),
  });
  return Buffer.from(bytes);
}

function converseStream(json: Json, behaviour: BedrockBehaviour | null): Buffer[] {
  const { text, toolUse } = plan(json);
  const frames = [frame('messageStart', { role: 'assistant' })];
  if (toolUse) {
    frames.push(
      frame('contentBlockStart', {
        contentBlockIndex: 0,
        start: { toolUse: { toolUseId: toolUse.toolUseId, name: toolUse.name } },
      }),
    );
    const input = JSON.stringify(toolUse.input);
    for (const piece of [input.slice(0, 5), input.slice(5)])
      frames.push(frame('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: piece } } }));
    frames.push(frame('contentBlockStop', { contentBlockIndex: 0 }));
  } else {
    const words = text.split(/(?<= )/);
    words.forEach((word, i) => {
      if (behaviour?.kind === 'stream-exception' && i === 2)
        frames.push(frame(behaviour.exceptionType, { message: behaviour.message }, 'exception'));
      frames.push(frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: word } }));
    });
    frames.push(frame('contentBlockStop', { contentBlockIndex: 0 }));
  }
  if (behaviour?.kind === 'stream-exception')
    return frames.slice(0, frames.findIndex((f) => f.includes(Buffer.from(':exception-type'))) + 1);
  frames.push(frame('messageStop', { stopReason: toolUse ? 'tool_use' : 'end_turn' }));
  frames.push(frame('metadata', { usage: USAGE(text.split(' ').length), metrics: { latencyMs: 42 } }));
  return frames;
}

/** A deterministic vector from the text, so tests can tell inputs apart. */
const vector = (text: string, size: number) =>
  Array.from({ length: size }, (_, i) => Number((((text.length + i) % 7) / 8).toFixed(3)));

function embeddingAnswer(modelId: string, json: Json): Json {
  if (modelId.startsWith('cohere.embed')) {
    return {
      embeddings: json.texts.map((t: string) => vector(t, 4)),
      id: randomUUID(),
      response_type: 'embeddings_floats',
      texts: json.texts,
    };
  }
  const embedding = vector(json.inputText, json.dimensions ?? 4);
  return {
    embedding,
    inputTextTokenCount: json.inputText.split(' ').length,
    ...(modelId.includes('v2') ? { embeddingsByType: { float: embedding } } : {}),
  };
}

/** Scores each document by how many query words it holds; results best first. */
function rerankAnswer(json: Json): Json {
  const words: string[] = json.queries[0].textQuery.text.toLowerCase().split(/\s+/);
  const scored = json.sources.map((source: Json, index: number) => {
    const text = String(
      source.inlineDocumentSource.textDocument?.text ?? JSON.stringify(source.inlineDocumentSource.jsonDocument),
    ).toLowerCase();
    return { index, relevanceScore: words.filter((w) => text.includes(w)).length / words.length };
  });
  scored.sort((a: Json, b: Json) => b.relevanceScore - a.relevanceScore);
  return {
    results: scored.slice(
      0,
      json.rerankingConfiguration.bedrockRerankingConfiguration.numberOfResults ?? scored.length,
    ),
  };
}

function send(res: ServerResponse, reply: Reply): void {
  const common = { 'x-amzn-requestid': randomUUID(), ...reply.headers };
  if (reply.frames) {
    res.writeHead(reply.status, { ...common, 'content-type': 'application/vnd.amazon.eventstream' });
    // Frames cut in two, so that the reader must join bytes across chunks.
    for (const bytes of reply.frames) {
      res.write(bytes.subarray(0, 7));
      res.write(bytes.subarray(7));
    }
    res.end();
    return;
  }
  const body = JSON.stringify(reply.json ?? {});
  res.writeHead(reply.status, {
    ...common,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
