/** The Prometheus text exposition format (version 0.0.4): label sets and sample values. */

const escapeLabel = (value: string) => value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');

export const labels = (pairs: Record<string, string>): string =>
  `{${Object.entries(pairs)
    .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
    .join(',')}}`;

export const num = (n: number): string =>
  Number.isFinite(n) ? String(Math.round(n * 1e9) / 1e9) : n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';

/** One metric family: its HELP and TYPE lines, then its samples. */
export const family = (name: string, type: string, help: string, samples: string[]): string[] => [
  `# HELP ${name} ${help}`,
  `# TYPE ${name} ${type}`,
  ...samples,
];
