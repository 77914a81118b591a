import { invalid } from '../../../lib/errors.js';
import { translateMessages } from './chat-messages.js';
import { isObject, type Json } from './wire-types.js';

/**
 * `max_tokens` is required by Anthropic but optional in OpenAI's format. 4096 is the largest
 * output every current Claude model allows (the oldest allowed 4096), so it never fails
 * validation while leaving room for a full answer; clients that want more ask for it.
 */
export const DEFAULT_MAX_TOKENS = 4096;

/**
 * An OpenAI chat completion body as a Messages API body. Parameters Anthropic has no
 * equivalent for are dropped when they only tune sampling (seed, penalties, logit_bias) and
 * refused when the answer would not be what the client asked for (n > 1, logprobs, JSON mode).
 */
export function chatToMessages(body: Json): Json {
  refuseUnsupported(body);
  const { system, messages } = translateMessages(body.messages);
  const out: Json = { model: body.model, messages, max_tokens: maxTokens(body) };
  if (system.length > 0)
    out.system = system.some((block) => block.cache_control !== undefined)
      ? system
      : system.map((block) => block.text).join('\n\n');
  Object.assign(out, samplingParams(body));
  const tools = translateTools(body.tools);
  if (tools) {
    out.tools = tools;
    const choice = translateToolChoice(body.tool_choice, body.parallel_tool_calls);
    if (choice) out.tool_choice = choice;
  }
  return out;
}

/** The Messages fields shared by chat and legacy completions. */
export function samplingParams(body: Json): Json {
  const out: Json = {};
  const stop = body.stop;
  if (typeof stop === 'string') out.stop_sequences = [stop];
  else if (Array.isArray(stop) && stop.length > 0) out.stop_sequences = stop;
  if (typeof body.temperature === 'number') out.temperature = body.temperature;
  if (typeof body.top_p === 'number') out.top_p = body.top_p;
  if (typeof body.top_k === 'number') out.top_k = body.top_k; // not OpenAI's, but Anthropic's own
  if (body.stream === true) out.stream = true;
  if (typeof body.user === 'string' && body.user !== '') out.metadata = { user_id: body.user };
  return out;
}

export function maxTokens(body: Json): number {
  const asked = [body.max_completion_tokens, body.max_tokens].find(
    (value): value is number => typeof value === 'number',
  );
  return asked ?? DEFAULT_MAX_TOKENS;
}

function refuseUnsupported(body: Json): void {
  if (typeof body.n === 'number' && body.n > 1)
    throw invalid('n', 'Anthropic returns one choice per request: n must be 1.');
  if (body.logprobs === true) throw invalid('logprobs', 'Anthropic does not return log probabilities.');
  const format = body.response_format;
  if (isObject(format) && format.type !== 'text')
    throw invalid('response_format', "response_format is not translated for Anthropic: only type 'text' is accepted.");
}

function translateTools(tools: unknown): Json[] | null {
  if (tools === undefined || tools === null) return null;
  if (!Array.isArray(tools)) throw invalid('tools', 'tools must be an array.');
  if (tools.length === 0) return null;
  return tools.map((tool, i) => {
    const fn = isObject(tool) && tool.type === 'function' && isObject(tool.function) ? tool.function : null;
    if (!fn || typeof fn.name !== 'string')
      throw invalid(`tools[${i}]`, `tools[${i}] must be a function tool with a name.`);
    const schema = isObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} };
    return {
      name: fn.name,
      ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
      input_schema: schema,
    };
  });
}

/** 'required' is Anthropic's 'any'; `parallel_tool_calls: false` is its `disable_parallel_tool_use`. */
function translateToolChoice(choice: unknown, parallel: unknown): Json | null {
  const single = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined || choice === null) return parallel === false ? { type: 'auto', ...single } : null;
  if (choice === 'auto') return { type: 'auto', ...single };
  if (choice === 'required') return { type: 'any', ...single };
  if (choice === 'none') return { type: 'none' };
  if (
    isObject(choice) &&
    choice.type === 'function' &&
    isObject(choice.function) &&
    typeof choice.function.name === 'string'
  ) {
    return { type: 'tool', name: choice.function.name, ...single };
  }
  throw invalid('tool_choice', "tool_choice must be 'auto', 'none', 'required' or a named function.");
}
