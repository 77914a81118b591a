/**
 * Counts tokens of text for budget reservations: with the model family's real BPE encoding
 * when it is known, else with UTF-8 bytes (a BPE token is at least one byte, so bytes never
 * undercount). Encodings are loaded on first use, and only when a budget is near enough its
 * limit that the byte bound would refuse or crowd it (budget-reservation.ts): a server whose
 * budgets have room never loads one (the o200k table is about 14 MB).
 */

export type EncodingName = 'o200k_base' | 'cl100k_base';

/** Counts the tokens of a text; never less than the provider's tokenizer would. */
export type TextCounter = (text: string) => number;

/** Model id prefixes of OpenAI families, most specific first. */
const FAMILIES: ReadonlyArray<[RegExp, EncodingName]> = [
  [
    /^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-6|o1|o3|o4|gpt-oss|gpt-realtime|gpt-audio|codex-|computer-use|omni-moderation)/,
    'o200k_base',
  ],
  [/^(gpt-4|gpt-3\.5|text-embedding-|text-davinci-00[23]|davinci-002|babbage-002)/, 'cl100k_base'],
];

const encodingOfModel = new Map<string, EncodingName | null>();

/** The encoding of a model, or null when its tokenizer is not public (Claude, Gemini, Llama, …). */
export function encodingFor(model: string | null): EncodingName | null {
  if (!model) return null;
  const known = encodingOfModel.get(model);
  if (known !== undefined) return known;
  // "openai/gpt-4o" or "azure/gpt-4o" name the same family.
  const id = model.toLowerCase().replace(/^.*\//, '');
  const encoding = FAMILIES.find(([pattern]) => pattern.test(id))?.[1] ?? null;
  // Model names come from clients: the memory starts over rather than grow without bound.
  if (encodingOfModel.size >= 1000) encodingOfModel.clear();
  encodingOfModel.set(model, encoding);
  return encoding;
}

type CountTokens = (text: string, options: { disallowedSpecial: Set<string> }) => number;

const loading = new Map<EncodingName, Promise<CountTokens>>();

/** Imports an encoding once; its tables are a few megabytes and take a moment to build. */
function loadEncoding(name: EncodingName): Promise<CountTokens> {
  let promise = loading.get(name);
  if (!promise) {
    promise =
      name === 'o200k_base'
        ? import('gpt-tokenizer/encoding/o200k_base').then((m) => m.countTokens as CountTokens)
        : import('gpt-tokenizer/encoding/cl100k_base').then((m) => m.countTokens as CountTokens);
    loading.set(name, promise);
  }
  return promise;
}

/** The encodings this process has loaded so far: the probe that shows a server whose budgets have room never loads one. */
export const loadedEncodings = (): EncodingName[] => [...loading.keys()];

export const utf8Bytes: TextCounter = (text) => Buffer.byteLength(text, 'utf8');

/**
 * BPE time grows with the square of a pre-token's length (40 KB of unbroken Chinese takes
 * seconds), so segments longer than this are counted as bytes instead.
 */
export const MAX_SEGMENT_CHARS = 64;
/** Characters per request given to the tokenizer; the rest counts as bytes, so work per request stays bounded. */
export const TOKENIZER_BUDGET_CHARS = 64 * 1024;

// Both encodings' pre-tokenizers end a piece before a space that follows a non-space, and
// before punctuation (other than an apostrophe) that follows a letter or digit: cutting there
// gives the same pieces, so the sum of the parts' counts is the count of the whole.
const SPACE_CUT = /(?<=\S)(?= )/u;
const PUNCTUATION_CUT = /(?<=[\p{L}\p{N}])(?=[^\s\p{L}\p{N}\p{M}'])/u;

/**
 * A counter for one request: exact counts with the encoding, bytes for overlong segments and
 * past the request's tokenizer budget. Text that contains special-token strings is counted as
 * plain text, the way providers treat user content.
 */
export async function counterFor(model: string | null): Promise<TextCounter> {
  const encoding = encodingFor(model);
  if (!encoding) return utf8Bytes;
  const count = await loadEncoding(encoding);
  const options = { disallowedSpecial: new Set<string>() };
  let budget = TOKENIZER_BUDGET_CHARS;
  const segment = (text: string): number => {
    if (text.length === 0) return 0;
    if (text.length > MAX_SEGMENT_CHARS || budget < text.length) return utf8Bytes(text);
    budget -= text.length;
    return count(text, options);
  };
  return (text) => {
    if (text.length <= MAX_SEGMENT_CHARS || text.length > budget) return segment(text);
    // Cut pieces are joined back up to MAX_SEGMENT_CHARS: fewer tokenizer calls, same sum.
    let total = 0;
    let batch = '';
    const add = (piece: string) => {
      if (batch.length + piece.length > MAX_SEGMENT_CHARS) {
        total += segment(batch);
        batch = '';
      }
      batch += piece;
    };
    for (const part of text.split(SPACE_CUT)) {
      if (part.length <= MAX_SEGMENT_CHARS) add(part);
      else for (const piece of part.split(PUNCTUATION_CUT)) add(piece);
    }
    return total + segment(batch);
  };
}
