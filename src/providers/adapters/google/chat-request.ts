import { toolArgumentsObject } from '../shared/openai-shapes.js';
import { AppError } from '../../../lib/errors.js';
import { isObject, type GeminiContent, type GeminiPart, type Json } from './gemini-types.js';
import { mediaPart, inlinePart } from './media-parts.js';
import { thoughtSignatureOf } from './tool-call-ids.js';

export interface ChatRequestOptions {
  /** Vertex AI requires `mimeType` on `fileData`; the Gemini API lets the server sniff it. */
  requireFileMimeType: boolean;
}

const invalid = (param: string, message: string) => new AppError('INVALID_REQUEST', message, { param });

/**
 * An OpenAI chat completion body as a Gemini `GenerateContentRequest`. The model is not part of
 * the body (it goes in the URL). What Gemini cannot express is refused with a message naming
 * the field, instead of being dropped silently.
 */
export function toGenerateContentRequest(body: Json, options: ChatRequestOptions): Json {
  if (!Array.isArray(body.messages)) throw invalid('messages', 'messages must be an array.');
  const { systemParts, contents } = convertMessages(body.messages, options);
  const request: Json = { contents };
  if (systemParts.length > 0) request.systemInstruction = { parts: systemParts };
  const tools = convertTools(body.tools);
  if (tools) request.tools = tools;
  const toolConfig = convertToolChoice(body.tool_choice);
  if (toolConfig) request.toolConfig = toolConfig;
  const generationConfig = convertGenerationConfig(body);
  if (Object.keys(generationConfig).length > 0) request.generationConfig = generationConfig;
  return request;
}

function convertMessages(
  messages: unknown[],
  options: ChatRequestOptions,
): { systemParts: GeminiPart[]; contents: GeminiContent[] } {
  const systemParts: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  // Tool results name only the call id; Gemini wants the function name, found in the call.
  const callNames = new Map<string, string>();
  const push = (role: 'user' | 'model', parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    // Parallel tool results (and back-to-back turns of one role) go in one turn, as Gemini expects.
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  messages.forEach((message, index) => {
    const at = `messages[${index}]`;
    if (!isObject(message) || typeof message.role !== 'string')
      throw invalid(at, `${at} must be an object with a role.`);
    switch (message.role) {
      case 'system':
      case 'developer':
        systemParts.push({ text: textOnly(message.content, at) });
        return;
      case 'user':
        push('user', userParts(message.content, at, options));
        return;
      case 'assistant':
        push('model', assistantParts(message, at, callNames));
        return;
      case 'tool':
      case 'function': {
        const id = typeof message.tool_call_id === 'string' ? message.tool_call_id : undefined;
        const name =
          (id !== undefined ? callNames.get(id) : undefined) ??
          (typeof message.name === 'string' ? message.name : undefined);
        if (!name)
          throw invalid(
            `${at}.tool_call_id`,
            `${at}.tool_call_id matches no tool call of an earlier assistant message.`,
          );
        push('user', [{ functionResponse: { name, response: functionResponseOf(message.content, at) } }]);
        return;
      }
      default:
        throw invalid(`${at}.role`, `${at}.role '${message.role}' is not supported by Gemini.`);
    }
  });
  return { systemParts, contents };
}

function userParts(content: unknown, at: string, options: ChatRequestOptions): GeminiPart[] {
  if (typeof content === 'string') return [{ text: content }];
  if (!Array.isArray(content)) throw invalid(`${at}.content`, `${at}.content must be a string or an array of parts.`);
  return content.map((part, i) => contentPart(part, `${at}.content[${i}]`, options));
}

function contentPart(part: unknown, at: string, options: ChatRequestOptions): GeminiPart {
  if (!isObject(part)) throw invalid(at, `${at} must be an object.`);
  switch (part.type) {
    case 'text':
      if (typeof part.text !== 'string') throw invalid(`${at}.text`, `${at}.text must be a string.`);
      return { text: part.text };
    case 'image_url': {
      const image = part.image_url;
      const url = typeof image === 'string' ? image : isObject(image) ? image.url : undefined;
      if (typeof url !== 'string') throw invalid(`${at}.image_url.url`, `${at}.image_url.url must be a string.`);
      return mediaPart(url, `${at}.image_url.url`, options.requireFileMimeType);
    }
    case 'input_audio': {
      const audio = isObject(part.input_audio) ? part.input_audio : {};
      if (typeof audio.data !== 'string' || (audio.format !== 'wav' && audio.format !== 'mp3')) {
        throw invalid(`${at}.input_audio`, `${at}.input_audio needs base64 data and a format of wav or mp3.`);
      }
      return { inlineData: { mimeType: `audio/${audio.format}`, data: audio.data } };
    }
    case 'file': {
      const file = isObject(part.file) ? part.file : {};
      if (typeof file.file_data !== 'string') {
        throw invalid(
          `${at}.file`,
          `${at}.file needs file_data as a data: URL; OpenAI file ids mean nothing to Gemini.`,
        );
      }
      return inlinePart(file.file_data, `${at}.file.file_data`);
    }
    default:
      throw invalid(`${at}.type`, `${at}.type '${String(part.type)}' is not supported by Gemini.`);
  }
}

function assistantParts(message: Json, at: string, callNames: Map<string, string>): GeminiPart[] {
  const parts: GeminiPart[] = [];
  if (message.content !== null && message.content !== undefined) {
    const text = textOnly(message.content, at, ['text', 'refusal']);
    if (text !== '') parts.push({ text });
  }
  const calls: unknown[] = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  calls.forEach((item, i) => {
    const where = `${at}.tool_calls[${i}]`;
    const call = isObject(item) ? item : {};
    const fn = isObject(call.function) ? call.function : null;
    if (!fn || typeof fn.name !== 'string') throw invalid(where, `${where} must be a function call with a name.`);
    if (typeof call.id === 'string') callNames.set(call.id, fn.name);
    const part: GeminiPart = {
      functionCall: { name: fn.name, args: toolArgumentsObject(fn.arguments, `${where}.function.arguments`) },
    };
    const signature = thoughtSignatureOf(call.id);
    if (signature) part.thoughtSignature = signature;
    parts.push(part);
  });
  if (isObject(message.function_call) && typeof message.function_call.name === 'string') {
    parts.push({
      functionCall: {
        name: message.function_call.name,
        args: toolArgumentsObject(message.function_call.arguments, `${at}.function_call.arguments`),
      },
    });
  }
  return parts;
}

/** A tool result as Gemini's `response` object: a JSON object as it is, anything else under `output`. */
function functionResponseOf(content: unknown, at: string): Json {
  const text = textOnly(content, at);
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) return parsed;
  } catch {
    // plain text result
  }
  return { output: text };
}

function textOnly(content: unknown, at: string, types: readonly string[] = ['text']): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (!Array.isArray(content))
    throw invalid(`${at}.content`, `${at}.content must be a string or an array of text parts.`);
  return content
    .map((part, i) => {
      if (!isObject(part) || !types.includes(String(part.type))) {
        throw invalid(`${at}.content[${i}]`, `${at}.content[${i}] must be a text part here.`);
      }
      const value = part.type === 'refusal' ? part.refusal : part.text;
      return typeof value === 'string' ? value : '';
    })
    .join('');
}

function convertTools(tools: unknown): Json[] | undefined {
  if (tools === undefined || tools === null) return undefined;
  if (!Array.isArray(tools)) throw invalid('tools', 'tools must be an array.');
  if (tools.length === 0) return undefined;
  const declarations = tools.map((tool, i) => {
    const fn = isObject(tool) && tool.type === 'function' && isObject(tool.function) ? tool.function : null;
    if (!fn || typeof fn.name !== 'string')
      throw invalid(
        `tools[${i}]`,
        `tools[${i}] must be a function tool with a name; Gemini takes function tools only.`,
      );
    const declaration: Json = { name: fn.name };
    if (typeof fn.description === 'string') declaration.description = fn.description;
    // parametersJsonSchema takes JSON Schema as OpenAI clients write it (parameters wants an OpenAPI subset).
    if (isObject(fn.parameters)) declaration.parametersJsonSchema = fn.parameters;
    return declaration;
  });
  return [{ functionDeclarations: declarations }];
}

function convertToolChoice(choice: unknown): Json | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === 'string') {
    return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
  }
  throw invalid('tool_choice', "tool_choice must be 'auto', 'none', 'required' or a named function.");
}

function convertGenerationConfig(body: Json): Json {
  const config: Json = {};
  const copy = (from: string, to: string) => {
    if (typeof body[from] === 'number') config[to] = body[from];
  };
  copy('temperature', 'temperature');
  copy('top_p', 'topP');
  copy('top_k', 'topK');
  copy('n', 'candidateCount');
  copy('presence_penalty', 'presencePenalty');
  copy('frequency_penalty', 'frequencyPenalty');
  copy('seed', 'seed');
  const maxTokens = typeof body.max_completion_tokens === 'number' ? body.max_completion_tokens : body.max_tokens;
  if (typeof maxTokens === 'number') config.maxOutputTokens = maxTokens;
  if (typeof body.stop === 'string') config.stopSequences = [body.stop];
  else if (Array.isArray(body.stop)) config.stopSequences = body.stop;

  const format = body.response_format;
  if (isObject(format)) {
    if (format.type === 'json_object') config.responseMimeType = 'application/json';
    else if (format.type === 'json_schema') {
      const schema = isObject(format.json_schema) ? format.json_schema.schema : undefined;
      config.responseMimeType = 'application/json';
      if (isObject(schema)) config.responseJsonSchema = schema;
    } else if (format.type !== 'text') {
      throw invalid('response_format', "response_format.type must be 'text', 'json_object' or 'json_schema'.");
    }
  }
  return config;
}
