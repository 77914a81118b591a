import { toolArgumentsObject } from '../shared/openai-shapes.js';
import { invalid } from '../../../lib/errors.js';
import { contentBlocks, textBlocks } from './content-parts.js';
import { isObject, type Json, type RequestBlock, type RequestMessage } from './wire-types.js';

export interface TranslatedMessages {
  /** System and developer messages, in order, wherever they stood in the conversation. */
  system: Array<Extract<RequestBlock, { type: 'text' }>>;
  messages: RequestMessage[];
}

/**
 * OpenAI chat messages as Anthropic's `system` and alternating `messages`. Tool results
 * become `tool_result` blocks of a user turn, assistant tool calls `tool_use` blocks; turns of
 * the same role next to each other are merged, so a run of tool messages and the user message
 * after them form one user turn with the tool results first, as Anthropic requires.
 */
export function translateMessages(raw: unknown): TranslatedMessages {
  if (!Array.isArray(raw)) throw invalid('messages', 'messages must be an array.');
  const system: TranslatedMessages['system'] = [];
  const messages: RequestMessage[] = [];
  const push = (role: RequestMessage['role'], content: RequestBlock[]) => {
    if (content.length === 0) return;
    const last = messages[messages.length - 1];
    if (last && last.role === role) last.content.push(...content);
    else messages.push({ role, content });
  };

  raw.forEach((message, i) => {
    const at = `messages[${i}]`;
    if (!isObject(message) || typeof message.role !== 'string')
      throw invalid(at, `${at} must be an object with a role.`);
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...textBlocks(message.content, at));
        break;
      case 'user':
        push('user', contentBlocks(message.content, at));
        break;
      case 'assistant':
        push('assistant', [...textBlocks(message.content, at), ...toolUses(message.tool_calls, at)]);
        break;
      case 'tool':
        push('user', [toolResult(message, at)]);
        break;
      default:
        throw invalid(
          `${at}.role`,
          `${at}.role '${message.role}' is not supported by Anthropic (system, developer, user, assistant and tool are).`,
        );
    }
  });
  return { system, messages };
}

function toolUses(calls: unknown, at: string): RequestBlock[] {
  if (calls === undefined || calls === null) return [];
  if (!Array.isArray(calls)) throw invalid(`${at}.tool_calls`, `${at}.tool_calls must be an array.`);
  return calls.map((call, i) => {
    const where = `${at}.tool_calls[${i}]`;
    const fn = isObject(call) && isObject(call.function) ? call.function : null;
    if (!isObject(call) || typeof call.id !== 'string' || !fn || typeof fn.name !== 'string') {
      throw invalid(where, `${where} must be a function call with an id and a name.`);
    }
    return {
      type: 'tool_use',
      id: call.id,
      name: fn.name,
      input: toolArgumentsObject(fn.arguments, `${where}.function.arguments`),
    };
  });
}

function toolResult(message: Json, at: string): RequestBlock {
  if (typeof message.tool_call_id !== 'string' || message.tool_call_id === '')
    throw invalid(`${at}.tool_call_id`, `${at}.tool_call_id must be the id of an earlier tool call.`);
  const content = typeof message.content === 'string' ? message.content : textBlocks(message.content, at);
  return { type: 'tool_result', tool_use_id: message.tool_call_id, content };
}
