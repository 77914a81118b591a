/** Which config target served a request, as the reference's log names it. */
export interface LastUsedOption {
  /** A JSON path into the config: `config` (the config itself, or no config), `config.targets[1]`, … */
  jsonPath: string;
  /** The index of that target among its siblings; undefined for `config`. */
  index: number | undefined;
  /** svcgw's label of the target (its `name`, else its index path; `root`), as `x-service-target` said. */
  target: string | undefined;
}

const INDEX_PATH = /^targets\[\d+\](?:\.targets\[\d+\])*$/;

/**
 * Reads the last attempt of a request log's `attempts` (the router writes each try's target
 * label, and its index path when the label is a name). A request without a config, or with
 * one that names the provider itself, was served by `config`. Records written before the router
 * kept the index path of a named target say `config` for it too: only its name is known.
 */
export function lastUsedOption(attemptsJson: string | null | undefined): LastUsedOption {
  const last = parseLast(attemptsJson);
  if (!last) return { jsonPath: 'config', index: undefined, target: undefined };
  const path = last.path ?? (INDEX_PATH.test(last.target) ? last.target : '');
  const index = /\[(\d+)\]$/.exec(path)?.[1];
  return {
    jsonPath: path === '' ? 'config' : `config.${path}`,
    index: index === undefined ? undefined : Number(index),
    target: last.target,
  };
}

function parseLast(attemptsJson: string | null | undefined): { target: string; path?: string } | null {
  if (!attemptsJson) return null;
  try {
    const attempts = JSON.parse(attemptsJson) as unknown;
    const last: unknown = Array.isArray(attempts) ? attempts.at(-1) : null;
    if (!last || typeof last !== 'object') return null;
    const { target, path } = last as { target?: unknown; path?: unknown };
    if (typeof target !== 'string') return null;
    return typeof path === 'string' ? { target, path } : { target };
  } catch {
    return null;
  }
}
