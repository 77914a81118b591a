import { z } from 'zod';

/**
 * What is known of a model beyond its price; `null` where the source does not say. Nothing in
 * the gateway acts on it yet: it is loaded and exposed so that limits and routing can.
 */
export interface ModelCapabilities {
  /** `chat`, `text`, `embedding`, `image`, `audio`, … */
  type: string | null;
  context_window: number | null;
  max_output_tokens: number | null;
  input_modalities: string[] | null;
  output_modalities: string[] | null;
  /** Features such as `tools`, `image`, `pdf`, `json_schema`, `reasoning`. */
  supports: string[];
}

const count = z.number().int().positive();
const words = z.array(z.string().min(1));

const simpleEntry = z
  .object({
    type: z.string().min(1).optional(),
    context_window: count.optional(),
    max_output_tokens: count.optional(),
    input_modalities: words.optional(),
    output_modalities: words.optional(),
    supports: words.optional(),
  })
  .strict();

const simpleDocument = z
  .object({ $comment: z.string().optional(), models: z.record(z.string(), z.unknown()) })
  .strict();

/** The reference gateway's `general/<provider>.json`: params, type and messages per model. */
const referenceEntry = z
  .object({
    params: z.array(z.object({ key: z.string(), maxValue: z.number().optional() }).loose()).optional(),
    type: z.object({ primary: z.string().optional(), supported: words.optional() }).loose().optional(),
  })
  .loose();

const REFERENCE_NON_MODELS = new Set(['default', '$comment', 'name', 'description']);
const MAX_TOKEN_KEYS = new Set(['max_tokens', 'max_completion_tokens', 'max_output_tokens']);

export interface ParsedCapabilities {
  capabilities: Map<string, ModelCapabilities>;
  invalid: string[];
}

const issues = (error: z.ZodError) =>
  error.issues.map((i) => `${i.path.join('.') || '(entry)'}: ${i.message}`).join('; ');

function fromSimple(entry: z.infer<typeof simpleEntry>): ModelCapabilities {
  return {
    type: entry.type ?? null,
    context_window: entry.context_window ?? null,
    max_output_tokens: entry.max_output_tokens ?? null,
    input_modalities: entry.input_modalities ?? null,
    output_modalities: entry.output_modalities ?? null,
    supports: entry.supports ?? [],
  };
}

function maxTokens(entry: z.infer<typeof referenceEntry> | undefined): number | null {
  const param = entry?.params?.find((p) => MAX_TOKEN_KEYS.has(p.key) && typeof p.maxValue === 'number');
  return param?.maxValue ?? null;
}

/** A model of the reference format, with the document's `default` filling what the model leaves out. */
function fromReference(
  entry: z.infer<typeof referenceEntry>,
  fallback: z.infer<typeof referenceEntry> | undefined,
): ModelCapabilities {
  return {
    type: entry.type?.primary ?? fallback?.type?.primary ?? null,
    context_window: null,
    max_output_tokens: maxTokens(entry) ?? maxTokens(fallback),
    input_modalities: null,
    output_modalities: null,
    supports: entry.type?.supported ?? fallback?.type?.supported ?? [],
  };
}

/** Reads a capabilities document in our format or the reference's; see docs/pricing.md. */
export function parseCapabilitiesDocument(json: unknown): ParsedCapabilities {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new Error('a capabilities document must be a JSON object');
  const record = json as Record<string, unknown>;
  const capabilities = new Map<string, ModelCapabilities>();
  const invalid: string[] = [];

  if ('models' in record) {
    const simple = simpleDocument.safeParse(record);
    if (!simple.success) throw new Error(`not a capabilities document: ${issues(simple.error)}`);
    for (const [model, raw] of Object.entries(simple.data.models)) {
      const entry = simpleEntry.safeParse(raw);
      if (entry.success) capabilities.set(model, fromSimple(entry.data));
      else invalid.push(`${model}: ${issues(entry.error)}`);
    }
    return { capabilities, invalid };
  }

  const defaults = referenceEntry.safeParse(record.default);
  const fallback = defaults.success ? defaults.data : undefined;
  for (const [model, raw] of Object.entries(record)) {
    if (REFERENCE_NON_MODELS.has(model)) continue;
    const entry = referenceEntry.safeParse(raw);
    if (entry.success) capabilities.set(model, fromReference(entry.data, fallback));
    else invalid.push(`${model}: ${issues(entry.error)}`);
  }
  return { capabilities, invalid };
}
