import { AppError } from '../../../lib/errors.js';

type Json = Record<string, unknown>;
type Block = Json;
interface ConverseMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

/** Bedrock fields a client may send as they are, for what the OpenAI shape cannot say. */
const NATIVE_FIELDS = [
  'additionalModelRequestFields',
  'additionalModelResponseFieldPaths',
  'guardrailConfig',
  'performanceConfig',
  'promptVariables',
  'requestMetadata',
];

const IMAGE_FORMATS: Record<string, string> = { png: 'png', jpeg: 'jpeg', jpg: 'jpeg', gif: 'gif', webp: 'webp' };
const DATA_URL_RE = /^data:image\/([a-z]+);base64,([A-Za-z0-9+/=\s]+)$/;

/**
 * An OpenAI chat body as a Converse / ConverseStream body: system messages become `system`,
 * tool results become user `toolResult` blocks, and consecutive messages of one role are
 * merged, because Converse wants user and assistant turns to alternate.
 */
export function toConverseRequest(body: Json): Json {
  if (typeof body.n === 'number' && body.n > 1) invalid('n', 'Bedrock returns one choice per request: n must be 1.');
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const system: Block[] = [];
  const turns: ConverseMessage[] = [];
  messages.forEach((raw, i) => {
    const message = asObject(raw) ?? invalid(`messages[${i}]`, 'Each message must be an object.');
    const role = message.role;
    if (role === 'system' || role === 'developer')
      system.push(...textBlocks(message.content, `messages[${i}].content`));
    else if (role === 'user') push(turns, 'user', userBlocks(message.content, `messages[${i}].content`));
    else if (role === 'assistant') push(turns, 'assistant', assistantBlocks(message, i));
    else if (role === 'tool') push(turns, 'user', [toolResultBlock(message, i)]);
    else invalid(`messages[${i}].role`, `Bedrock does not take messages of role '${String(role)}'.`);
  });

  const out: Json = { messages: turns };
  if (system.length > 0) out.system = system;
  const inference = inferenceConfig(body);
  if (inference) out.inferenceConfig = inference;
  const tools = toolConfig(body, turns);
  if (tools) out.toolConfig = tools;
  for (const field of NATIVE_FIELDS) if (body[field] !== undefined && body[field] !== null) out[field] = body[field];
  return out;
}

function push(turns: ConverseMessage[], role: 'user' | 'assistant', content: Block[]): void {
  if (content.length === 0) return;
  const last = turns[turns.length - 1];
  if (last && last.role === role) last.content.push(...content);
  else turns.push({ role, content });
}

function inferenceConfig(body: Json): Json | null {
  const config: Json = {};
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (typeof maxTokens === 'number') config.maxTokens = maxTokens;
  if (typeof body.temperature === 'number') config.temperature = body.temperature;
  if (typeof body.top_p === 'number') config.topP = body.top_p;
  if (typeof body.stop === 'string') config.stopSequences = [body.stop];
  else if (Array.isArray(body.stop) && body.stop.length > 0) config.stopSequences = body.stop;
  return Object.keys(config).length > 0 ? config : null;
}

/**
 * `tools` as `toolConfig`. Converse has no "none" choice: with `tool_choice: "none"` the tools
 * are left out, unless the conversation already holds tool blocks, which Converse only accepts
 * with a toolConfig (then the model may still call a tool).
 */
function toolConfig(body: Json, turns: ConverseMessage[]): Json | null {
  if (!Array.isArray(body.tools) || body.tools.length === 0) return null;
  const choice = body.tool_choice;
  const hasToolBlocks = turns.some((turn) => turn.content.some((block) => 'toolUse' in block || 'toolResult' in block));
  if (choice === 'none' && !hasToolBlocks) return null;
  const tools = body.tools.map((raw, i) => {
    const fn =
      asObject(asObject(raw)?.function) ??
      invalid(`tools[${i}]`, 'Each tool must be {type: "function", function: {name, parameters}}.');
    if (typeof fn.name !== 'string' || fn.name === '') invalid(`tools[${i}].function.name`, 'A tool needs a name.');
    const spec: Json = {
      name: fn.name,
      inputSchema: { json: asObject(fn.parameters) ?? { type: 'object', properties: {} } },
    };
    if (typeof fn.description === 'string' && fn.description !== '') spec.description = fn.description;
    return { toolSpec: spec };
  });
  const config: Json = { tools };
  if (choice === 'auto') config.toolChoice = { auto: {} };
  else if (choice === 'required') config.toolChoice = { any: {} };
  else if (asObject(choice)) {
    const name = asObject(asObject(choice)?.function)?.name;
    if (typeof name !== 'string')
      invalid('tool_choice', 'tool_choice must be "auto", "required", "none" or {type: "function", function: {name}}.');
    config.toolChoice = { tool: { name } };
  }
  return config;
}

function userBlocks(content: unknown, param: string): Block[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (!Array.isArray(content)) invalid(param, 'Message content must be a string or an array of parts.');
  return content.map((raw, i) => {
    const part = asObject(raw) ?? invalid(`${param}[${i}]`, 'Each content part must be an object.');
    if (part.type === 'text' && typeof part.text === 'string') return { text: part.text };
    if (part.type === 'image_url') return imageBlock(asObject(part.image_url)?.url, `${param}[${i}].image_url.url`);
    return invalid(
      `${param}[${i}].type`,
      `Bedrock does not take '${String(part.type)}' content parts here (text and image_url are translated).`,
    );
  });
}

function textBlocks(content: unknown, param: string): Block[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (content === null || content === undefined) return [];
  if (!Array.isArray(content)) invalid(param, 'Message content must be a string or an array of text parts.');
  return content.map((raw, i) => {
    const part = asObject(raw);
    if (part?.type !== 'text' || typeof part.text !== 'string')
      invalid(`${param}[${i}]`, 'Only text parts are allowed here.');
    return { text: part.text };
  });
}

/** Images travel as bytes (base64 in the JSON body); Bedrock fetches no URLs. */
function imageBlock(url: unknown, param: string): Block {
  const match = typeof url === 'string' ? DATA_URL_RE.exec(url) : null;
  if (!match)
    invalid(
      param,
      'Bedrock takes images as base64 data: URLs (data:image/png;base64,…); it does not fetch http(s) URLs.',
    );
  const [, subtype = '', bytes = ''] = match;
  const format =
    IMAGE_FORMATS[subtype] ?? invalid(param, `Bedrock takes png, jpeg, gif and webp images, not image/${subtype}.`);
  return { image: { format, source: { bytes: bytes.replace(/\s+/g, '') } } };
}

function assistantBlocks(message: Json, i: number): Block[] {
  const blocks = textBlocks(message.content, `messages[${i}].content`);
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  calls.forEach((raw, j) => {
    const param = `messages[${i}].tool_calls[${j}]`;
    const call = asObject(raw) ?? invalid(param, 'Each tool call must be an object.');
    const fn = asObject(call.function) ?? invalid(`${param}.function`, 'A tool call needs a function.');
    if (typeof call.id !== 'string' || typeof fn.name !== 'string')
      invalid(param, 'A tool call needs an id and a function name.');
    blocks.push({
      toolUse: {
        toolUseId: call.id,
        name: fn.name,
        input: parseArguments(fn.arguments, `${param}.function.arguments`),
      },
    });
  });
  return blocks;
}

function parseArguments(args: unknown, param: string): unknown {
  if (args === undefined || args === null || args === '') return {};
  if (typeof args !== 'string') return args;
  try {
    return JSON.parse(args);
  } catch {
    return invalid(param, 'Tool call arguments must be a JSON string.');
  }
}

function toolResultBlock(message: Json, i: number): Block {
  if (typeof message.tool_call_id !== 'string')
    invalid(`messages[${i}].tool_call_id`, 'A tool message needs tool_call_id.');
  const text =
    typeof message.content === 'string'
      ? message.content
      : textBlocks(message.content, `messages[${i}].content`)
          .map((block) => block.text)
          .join('');
  return { toolResult: { toolUseId: message.tool_call_id, content: [{ text }] } };
}

function asObject(value: unknown): Json | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : null;
}

function invalid(param: string, message: string): never {
  throw new AppError('INVALID_REQUEST', message, { param });
}
