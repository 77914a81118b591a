/** The parts of the Anthropic Messages API wire format the adapter reads and writes. */

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export type ImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

/** Content blocks of a request; `cache_control` is carried over from the client's part when given. */
export type RequestBlock =
  | { type: 'text'; text: string; cache_control?: unknown }
  | { type: 'image'; source: ImageSource; cache_control?: unknown }
  | {
      type: 'document';
      source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
      cache_control?: unknown;
    }
  | { type: 'tool_use'; id: string; name: string; input: Json }
  | { type: 'tool_result'; tool_use_id: string; content: string | RequestBlock[]; is_error?: boolean };

export interface RequestMessage {
  role: 'user' | 'assistant';
  content: RequestBlock[];
}

/** `usage` of a Message, of `message_start` and of `message_delta` (cumulative counts). */
export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** A response content block; only text and tool_use reach the client (thinking and server tools do not). */
export interface ResponseBlock {
  type: string;
  [field: string]: unknown;
}

export interface AnthropicMessage {
  id?: string;
  type?: 'message';
  role?: 'assistant';
  model?: string;
  content?: ResponseBlock[];
  stop_reason?: string | null;
  stop_sequence?: string | null;
  usage?: AnthropicUsage;
}

/** `{ type: 'error', error: { type, message } }`: the error body, and the data of an `error` stream event. */
export interface AnthropicErrorBody {
  type?: string;
  error?: { type?: string; message?: string };
}
