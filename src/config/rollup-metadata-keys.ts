/**
 * The entries of the `analytics_rollup_metadata_keys` setting: metadata keys, and combinations
 * of two keys (`env+team`) whose pairs are summed together. Here rather than in analytics because
 * the settings schema validates them and the request-log writer sums them by the same names.
 */

/** Joins the two keys of a combination in its name. */
export const COMBINATION_SEPARATOR = '+';
const MAX_ENTRIES = 8;
const MAX_KEY_LENGTH = 128;

/** The canonical name of a combination: its keys sorted, so `team+env` and `env+team` are one. */
export const combinationName = (keys: readonly string[]): string => [...keys].sort().join(COMBINATION_SEPARATOR);

/** The keys an entry names: one for a key, two (sorted) for a combination. */
export const entryKeys = (entry: string): string[] => entry.split(COMBINATION_SEPARATOR);

/** The entries as written: comma-separated, trimmed, empty ones skipped; a combination's keys trimmed. */
const rawEntries = (setting: string): string[][] =>
  setting
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => entry.split(COMBINATION_SEPARATOR).map((key) => key.trim()));

/** What is wrong with the setting, or null: the settings schema refuses the start with it. */
export function rollupMetadataKeysProblem(setting: string): string | null {
  const entries = rawEntries(setting);
  if (entries.length > MAX_ENTRIES) return `holds at most ${MAX_ENTRIES} keys and combinations`;
  for (const keys of entries) {
    const written = keys.join(COMBINATION_SEPARATOR);
    if (keys.some((key) => key.length > MAX_KEY_LENGTH)) return `keys are at most ${MAX_KEY_LENGTH} characters`;
    if (keys.length > 2) return `"${written}": a combination joins exactly two keys (a key cannot contain "+")`;
    if (keys.some((key) => key === '')) return `"${written}": a combination joins two non-empty keys`;
    if (keys.length === 2 && keys[0] === keys[1]) return `"${written}": a combination joins two different keys`;
  }
  return null;
}

/**
 * The entries of a valid setting by canonical name (a combination's keys sorted and joined by
 * `+`), without repeats.
 */
export const parseRollupMetadataKeys = (setting: string): string[] => [
  ...new Set(rawEntries(setting).map(combinationName)),
];

/**
 * The value a combination sums a request under: its keys' values in the order of the keys in
 * the name, as a JSON array (unambiguous whatever the values hold).
 */
export const combinationValue = (values: readonly string[]): string => JSON.stringify(values);
