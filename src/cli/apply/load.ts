import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { FatalError } from '../fatal-error.js';
import { applyFileSchema, type ApplyFile } from './schema.js';

const VARIABLE = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** `${NAME}` in any string takes the environment variable's value (secrets stay out of the file); `$$` is a `$`. */
export function interpolate(value: unknown, env: NodeJS.ProcessEnv, missing: Set<string>): unknown {
  if (typeof value === 'string') {
    return value.replace(VARIABLE, (match, name: string | undefined) => {
      if (match === '$$') return '$';
      const found = env[name!];
      if (found === undefined) missing.add(name!);
      return found ?? '';
    });
  }
  if (Array.isArray(value)) return value.map((item) => interpolate(item, env, missing));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env, missing)]));
  return value;
}

/** Parses a YAML or JSON apply file (JSON is YAML too); every problem is a usage error (exit 2). */
export function parseApplyFile(text: string, source: string, env: NodeJS.ProcessEnv = process.env): ApplyFile {
  let raw: unknown;
  try {
    raw = parseYaml(text, { prettyErrors: true });
  } catch (error) {
    throw new FatalError(`${source}: not valid YAML or JSON: ${(error as Error).message}`, 2);
  }
  const missing = new Set<string>();
  const expanded = interpolate(raw ?? {}, env, missing);
  if (missing.size > 0)
    throw new FatalError(
      `${source}: environment variable${missing.size > 1 ? 's' : ''} not set: ${[...missing].join(', ')}`,
      2,
    );
  const parsed = applyFileSchema.safeParse(expanded);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `  ${issue.path.join('.') || '(file)'}: ${issue.message}`);
    throw new FatalError(`${source} is not a valid apply file:\n${issues.join('\n')}`, 2);
  }
  checkUnique(parsed.data, source);
  return parsed.data;
}

function checkUnique(file: ApplyFile, source: string): void {
  const lists: [string, string[]][] = [
    ['workspaces', file.workspaces.map((w) => w.slug)],
    ['secret_references', file.secret_references.map((r) => r.slug)],
    ['integrations', file.integrations.map((i) => i.slug)],
    ['providers', file.providers.map((p) => `${p.workspace ?? ''}/${p.slug}`)],
    ['configs', file.configs.map((c) => c.slug)],
    ['deployments', file.deployments.map((d) => d.slug)],
    ['policies.rate_limits', file.policies.rate_limits.map((p) => `${p.workspace ?? ''}/${p.name}`)],
    ['policies.usage_limits', file.policies.usage_limits.map((p) => `${p.workspace ?? ''}/${p.name}`)],
    ['mcp_integrations', file.mcp_integrations.map((i) => i.slug)],
    ['mcp_servers', file.mcp_servers.map((s) => s.slug)],
    ['agent_integrations', file.agent_integrations.map((i) => i.slug)],
    ['agent_servers', file.agent_servers.map((s) => s.slug)],
    ['api_keys', file.api_keys.map((k) => `${k.workspace ?? ''}/${k.type}/${k.name}`)],
  ];
  for (const [section, ids] of lists) {
    const seen = new Set<string>();
    for (const id of ids) {
      if (seen.has(id)) throw new FatalError(`${source}: ${section} names ${id.replace(/^\//, '')} twice`, 2);
      seen.add(id);
    }
  }
}

export function readApplyFile(path: string, env: NodeJS.ProcessEnv = process.env): ApplyFile {
  let text: string;
  try {
    text = path === '-' ? readFileSync(0, 'utf8') : readFileSync(path, 'utf8');
  } catch (error) {
    throw new FatalError(`cannot read ${path}: ${(error as Error).message}`, 2);
  }
  return parseApplyFile(text, path === '-' ? 'standard input' : path, env);
}
