/** Loose JSON object: Cohere and OpenAI bodies are read field by field, never trusted whole. */
export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const finite = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? value : null;

/** `usage` (chat) or `meta` (embed, rerank): what was billed and what the model saw. */
export interface CohereUsage {
  billed_units?: { input_tokens?: number; output_tokens?: number; search_units?: number };
  tokens?: { input_tokens?: number; output_tokens?: number };
}

export interface CohereToolCall {
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

/** POST /v2/chat answer (non-streamed). */
export interface CohereChatResponse {
  id?: string;
  finish_reason?: string;
  message?: {
    role?: string;
    content?: Array<{ type?: string; text?: string }>;
    tool_plan?: string;
    tool_calls?: CohereToolCall[];
  };
  usage?: CohereUsage;
}
