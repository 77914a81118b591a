/** The parts of the Gemini `generateContent` wire format the adapter reads and writes. */

export type Json = Record<string, unknown>;

export interface GeminiPart {
  text?: string;
  /** A thought summary (thinking models): not part of the answer. */
  thought?: boolean;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: { name: string; args?: Json; id?: string };
  functionResponse?: { name: string; response: Json };
  thoughtSignature?: string;
}

export interface GeminiContent {
  role?: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
}

export interface GeminiCandidate {
  index?: number;
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
}

export interface GenerateContentResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
}

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
