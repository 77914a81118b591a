import { AppError } from '../../../lib/errors.js';
import { isObject, type Json } from './cohere-types.js';

const invalid = (param: string, message: string) => new AppError('INVALID_REQUEST', message, { param });

/** Sampling fields whose names and meaning are the same in both APIs. */
const SAME_NAME = ['temperature', 'seed', 'frequency_penalty', 'presence_penalty'] as const;

/**
 * An OpenAI chat-completions body as a Cohere `POST /v2/chat` body. Roles map one to one
 * (`developer` is a system turn); tool calls and tool results keep their ids, which is what
 * lets a tool round trip work; `top_p` is Cohere's `p`, `stop` its `stop_sequences`.
 * Anything Cohere cannot express (n > 1, audio, files) is refused with the field named.
 */
export function toCohereChat(body: Json): Json {
  if (typeof body.model !== 'string' || body.model.trim() === '') {
    throw invalid('model', 'model is required: the Cohere model to call (such as command-a-03-2025).');
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    throw invalid('messages', 'messages must be a non-empty array.');
  if (typeof body.n === 'number' && body.n > 1)
    throw invalid('n', 'Cohere returns one choice per request: n must be 1.');

  const out: Json = {
    model: body.model.trim(),
    messages: body.messages.map((message, i) => toCohereMessage(message, `messages[${i}]`)),
  };
  if (body.stream === true) out.stream = true;
  for (const field of SAME_NAME) if (typeof body[field] === 'number') out[field] = body[field];
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (typeof maxTokens === 'number') out.max_tokens = maxTokens;
  if (typeof body.top_p === 'number') out.p = body.top_p;
  if (typeof body.stop === 'string') out.stop_sequences = [body.stop];
  else if (Array.isArray(body.stop) && body.stop.length > 0) out.stop_sequences = body.stop;
  if (body.logprobs === true) out.logprobs = true;
  const format = responseFormat(body.response_format);
  if (format) out.response_format = format;
  Object.assign(out, tools(body.tools, body.tool_choice));
  return out;
}

function toCohereMessage(message: unknown, at: string): Json {
  if (!isObject(message) || typeof message.role !== 'string') throw invalid(at, `${at} must be an object with a role.`);
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: textOnly(message.content, at) };
    case 'user':
      return { role: 'user', content: userContent(message.content, at) };
    case 'assistant':
      return assistantMessage(message, at);
    case 'tool':
      if (typeof message.tool_call_id !== 'string')
        throw invalid(`${at}.tool_call_id`, `${at}.tool_call_id is required on a tool message.`);
      return { role: 'tool', tool_call_id: message.tool_call_id, content: toolContent(message.content, at) };
    default:
      throw invalid(`${at}.role`, `${at}.role '${message.role}' is not supported by Cohere.`);
  }
}

/** A system or assistant text: a string, or the text parts joined. */
function textOnly(content: unknown, at: string): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (!Array.isArray(content))
    throw invalid(`${at}.content`, `${at}.content must be a string or an array of text parts.`);
  return content
    .map((part, i) => {
      if (!isObject(part) || part.type !== 'text' || typeof part.text !== 'string') {
        throw invalid(`${at}.content[${i}]`, `${at}.content[${i}] must be a text part here.`);
      }
      return part.text;
    })
    .join('');
}

/** User content: a string, or text and image parts (Cohere's vision models take `image_url` as OpenAI sends it). */
function userContent(content: unknown, at: string): string | Json[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalid(`${at}.content`, `${at}.content must be a string or an array of parts.`);
  return content.map((part, i) => {
    const where = `${at}.content[${i}]`;
    if (!isObject(part)) throw invalid(where, `${where} must be an object.`);
    if (part.type === 'text' && typeof part.text === 'string') return { type: 'text', text: part.text };
    if (part.type === 'image_url') {
      const image = isObject(part.image_url) ? part.image_url : {};
      if (typeof image.url !== 'string')
        throw invalid(`${where}.image_url.url`, `${where}.image_url.url must be a string.`);
      return {
        type: 'image_url',
        image_url: { url: image.url, ...(typeof image.detail === 'string' ? { detail: image.detail } : {}) },
      };
    }
    throw invalid(`${where}.type`, `${where}.type '${String(part.type)}' is not supported by Cohere.`);
  });
}

function assistantMessage(message: Json, at: string): Json {
  const out: Json = { role: 'assistant' };
  const text = textOnly(message.content, at);
  if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
    out.tool_calls = message.tool_calls.map((call, i) => {
      const where = `${at}.tool_calls[${i}]`;
      const fn = isObject(call) && isObject(call.function) ? call.function : null;
      if (!isObject(call) || typeof call.id !== 'string' || !fn || typeof fn.name !== 'string') {
        throw invalid(where, `${where} must be a function call with an id and a name.`);
      }
      return {
        id: call.id,
        type: 'function',
        function: { name: fn.name, arguments: typeof fn.arguments === 'string' ? fn.arguments : '{}' },
      };
    });
    // Cohere takes the text that came with tool calls as the tool plan, not as content.
    if (text !== '') out.tool_plan = text;
  } else {
    out.content = text;
  }
  return out;
}

/** Tool results: a string (usually JSON) as it is, or text parts as Cohere text blocks. */
function toolContent(content: unknown, at: string): string | Json[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content))
    throw invalid(`${at}.content`, `${at}.content must be a string or an array of text parts.`);
  return content.map((part, i) => {
    if (!isObject(part) || part.type !== 'text' || typeof part.text !== 'string') {
      throw invalid(`${at}.content[${i}]`, `${at}.content[${i}] must be a text part here.`);
    }
    return { type: 'text', text: part.text };
  });
}

/** `json_object` as it is; a `json_schema` becomes Cohere's `json_object` with that schema. */
function responseFormat(format: unknown): Json | null {
  if (!isObject(format)) return null;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    const schema = isObject(format.json_schema) ? format.json_schema.schema : undefined;
    return isObject(schema) ? { type: 'json_object', json_schema: schema } : { type: 'json_object' };
  }
  return null;
}

/**
 * Tools keep the OpenAI function shape, which Cohere v2 shares. Cohere's `tool_choice` knows
 * only REQUIRED and NONE: a named function becomes REQUIRED with that one tool offered.
 */
function tools(list: unknown, choice: unknown): Json {
  if (!Array.isArray(list) || list.length === 0) return {};
  let offered = list.map((tool, i) => {
    const fn = isObject(tool) && isObject(tool.function) ? tool.function : null;
    if (!fn || typeof fn.name !== 'string')
      throw invalid(`tools[${i}]`, `tools[${i}] must be a function tool with a name.`);
    return {
      type: 'function',
      function: {
        name: fn.name,
        ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
        parameters: isObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} },
      },
    };
  });
  const out: Json = {};
  if (choice === 'required') out.tool_choice = 'REQUIRED';
  else if (choice === 'none') out.tool_choice = 'NONE';
  else if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === 'string') {
    const name = choice.function.name;
    offered = offered.filter((tool) => tool.function.name === name);
    if (offered.length === 0) throw invalid('tool_choice', `tool_choice names '${name}', which is not in tools.`);
    out.tool_choice = 'REQUIRED';
  }
  out.tools = offered;
  return out;
}
