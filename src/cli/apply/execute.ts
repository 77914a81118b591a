import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import type { Client } from '../client/http-client.js';
import { FatalError } from '../fatal-error.js';
import { createProgress } from '../output.js';
import type { AliasRow, CatalogueState, IntegrationModelsRow } from './plan-models.js';
import type { ApplyFile } from './schema.js';
import type { GuardrailRow } from './guardrails.js';
import { fetchToolState } from './fetch-tools.js';
import { fetchPromptState } from './prompts.js';
import type { SecretReferenceRow } from './secret-references.js';
import {
  findConfig,
  type ApiKeyRow,
  type ConfigRow,
  type CurrentState,
  type DeploymentRow,
  type IntegrationRow,
  type PolicyRow,
  type ProviderRow,
  type Step,
  type WorkspaceRow,
} from './plan.js';

/** Lists whose pages are smaller than 1000 items. */
const PAGE_SIZES: Record<string, number> = { '/v1/mcp-servers': 100 };

/** Every page of a list; `T` is what its items are. */
async function fetchAll<T extends { id: string }>(
  client: Client,
  path: string,
  query: Record<string, string> = {},
): Promise<T[]> {
  const rows: T[] = [];
  const size = PAGE_SIZES[path] ?? 1000;
  for (let page = 0; ; page++) {
    const body = await client.get<{ total: number; data: T[] }>(path, {
      ...query,
      page_size: size,
      current_page: page,
    });
    rows.push(...body.data);
    if (body.data.length < size || rows.length >= body.total) return rows;
  }
}

/** Calls `fn` on every item, a few at a time. */
async function mapFew<T, R>(items: readonly T[], fn: (item: T) => Promise<R>, width = 4): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(fn))));
  return out;
}

/**
 * Every active and archived config, with the latest `config` object of those the file names
 * (the list shows summaries only).
 */
async function fetchConfigs(client: Client, file: ApplyFile): Promise<ConfigRow[]> {
  if (file.configs.length === 0 && !file.aliases.some((a) => a.config !== undefined)) return [];
  const rows = (
    await Promise.all(['active', 'archived'].map((status) => fetchAll<ConfigRow>(client, '/v1/configs', { status })))
  ).flat();
  const named = file.configs.map((c) => findConfig(rows, c.slug)).filter((row) => row !== undefined);
  const full = new Map(
    (await mapFew(named, (row) => client.get<ConfigRow>(`/v1/configs/${encodeURIComponent(row.id)}`))).map((row) => [
      row.id,
      row,
    ]),
  );
  return rows.map((row) => full.get(row.id) ?? row);
}

/** The active guardrails, with checks and actions for those the file names. */
async function fetchGuardrails(client: Client, file: ApplyFile): Promise<GuardrailRow[]> {
  if (file.guardrails.length === 0) return [];
  const rows = await fetchAll<GuardrailRow>(client, '/v1/guardrails', { status: 'active' });
  const named = new Set(file.guardrails.map((g) => g.slug));
  return mapFew(rows, (row) =>
    named.has(row.slug)
      ? client.get<GuardrailRow>(`/v1/guardrails/${encodeURIComponent(row.id)}`)
      : Promise.resolve(row),
  );
}

/** Reads what the file's sections need; an admin key can read all of it. */
export async function fetchCurrentState(client: Client, file: ApplyFile): Promise<CurrentState> {
  const need = (n: number) => n > 0;
  const [
    workspaces,
    integrations,
    providers,
    rateLimits,
    usageLimits,
    apiKeys,
    configs,
    deployments,
    secretReferences,
  ] = await Promise.all([
    fetchAll<WorkspaceRow>(client, '/v1/workspaces', { status: 'active,archived' }),
    need(file.integrations.length + file.providers.length)
      ? fetchAll<IntegrationRow>(client, '/v1/integrations', { status: 'active' })
      : [],
    need(file.providers.length) ? fetchAll<ProviderRow>(client, '/v1/providers', { status: 'active' }) : [],
    need(file.policies.rate_limits.length)
      ? fetchAll<PolicyRow>(client, '/v1/policies/rate-limits', { status: 'active' })
      : [],
    need(file.policies.usage_limits.length)
      ? fetchAll<PolicyRow>(client, '/v1/policies/usage-limits', { status: 'active' })
      : [],
    need(file.api_keys.length) ? fetchAll<ApiKeyRow>(client, '/v1/api-keys') : [],
    fetchConfigs(client, file),
    need(file.deployments.length) ? fetchAll<DeploymentRow>(client, '/v1/deployments', { status: 'active' }) : [],
    need(file.secret_references.length)
      ? fetchAll<SecretReferenceRow>(client, '/v1/secret-references', { status: 'active' })
      : [],
  ]);
  return {
    workspaces,
    integrations,
    providers,
    rateLimits,
    usageLimits,
    apiKeys,
    configs,
    deployments,
    secretReferences,
    tools: await fetchToolState(client, file, (path, query) => fetchAll(client, path, query)),
    guardrails: await fetchGuardrails(client, file),
    prompts: await fetchPromptState(client, file, workspaces),
    ...(await fetchCatalogue(client, file, integrations)),
  };
}

/** The model lists of the integrations the file gives models, and every alias. */
async function fetchCatalogue(
  client: Client,
  file: ApplyFile,
  integrations: readonly IntegrationRow[],
): Promise<CatalogueState> {
  const named = file.integrations.filter(
    (i) =>
      (i.models !== undefined || i.allow_all_models !== undefined) && integrations.some((row) => row.slug === i.slug),
  );
  const lists = await mapFew(named, (i) =>
    client.get<IntegrationModelsRow>(`/v1/integrations/${encodeURIComponent(i.slug)}/models`),
  );
  const aliases = file.aliases.length > 0 ? await fetchAll<AliasRow>(client, '/v1/model-aliases') : [];
  return { integrationModels: Object.fromEntries(named.map((i, n) => [i.slug, lists[n]!])), aliases };
}

const INVALID_CONFIG = /^Invalid config \(\d+ problems?\): ([\s\S]+) \(HTTP 400 AB01_INVALID_CONFIG\)$/;

/**
 * The server's refusal as it said it, except for an invalid config (400 AB01_INVALID_CONFIG),
 * whose message lists every problem with its JSON path (`config.targets[1].weight: …`): one
 * problem a line here, under the step that names the config's slug.
 */
function refusal(s: Step, message: string): string {
  const invalid = s.kind === 'config' ? INVALID_CONFIG.exec(message) : null;
  if (!invalid) return message;
  const problems = invalid[1]!.split(/; (?=config[.[:])/);
  return `the server refused its config (HTTP 400 AB01_INVALID_CONFIG), ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${problems.map((p) => `    ${p}`).join('\n')}`;
}

/** A step that failed: what `apply --json` reports as its error, next to the steps applied before it. */
export class StepFailed extends FatalError {
  constructor(
    message: string,
    readonly step: Pick<Step, 'kind' | 'name' | 'action'>,
    exitCode: number,
  ) {
    super(message, exitCode);
  }
}

function stepFailed(s: Step, error: unknown, done: number | null): StepFailed {
  const message = refusal(s, error instanceof FatalError ? error.message : String(error));
  const after =
    done === null
      ? ''
      : `\n${done} earlier change${done === 1 ? ' was' : 's were'} applied; fix the cause and apply again.`;
  return new StepFailed(
    `${s.action} ${s.kind.replace(/_/g, ' ')} ${s.name} failed: ${message}${after}`,
    { kind: s.kind, name: s.name, action: s.action },
    error instanceof FatalError ? error.exitCode : 1,
  );
}

interface DryRunAnswer {
  ok: boolean;
  results: { status: number; error: { message: string; code: string | null } | null }[];
}

/**
 * A dry run: the server runs the plan's requests as this key would, in order and in one
 * transaction that it rolls back (POST /v1/dry-run), so the dry run fails where the real run
 * would (a taken slug, a workspace the key cannot reach, an invalid config) and changes nothing.
 */
export async function checkPlanOnServer(client: Client, steps: readonly Step[]): Promise<void> {
  const sent: { step: Step; request: NonNullable<Step['request']> }[] = [];
  for (const s of steps) {
    if (s.awaits) continue; // needs a sync that a rolled-back integration never gets
    if (s.request) sent.push({ step: s, request: s.request });
    if (s.then) sent.push({ step: s, request: s.then });
  }
  if (sent.length === 0) return;
  const answer = await client.post<DryRunAnswer>('/v1/dry-run', { requests: sent.map((x) => x.request) });
  const index = answer.results.findIndex((r) => r.error !== null);
  if (answer.ok || index < 0) return;
  const { status, error } = answer.results[index]!;
  throw stepFailed(
    sent[index]!.step,
    new FatalError(`${error!.message} (HTTP ${status}${error!.code ? ` ${error!.code}` : ''})`),
    null,
  );
}

/** How long an apply waits for an MCP integration's first sync, and how often it looks. */
const SYNC_WAIT_MS = 30_000;
const SYNC_POLL_MS = 250;

/** Waits until `path` (an integration's metadata) says the sync is done, or says why not. */
async function waitForSync(client: Client, path: string): Promise<void> {
  for (let waited = 0; ; waited += SYNC_POLL_MS) {
    const meta = await client.get<{ sync_status: string; sync_error?: string | null }>(path);
    if (meta.sync_status === 'synced') return;
    if (meta.sync_status === 'error')
      throw new FatalError(`its integration could not be synced, so its capabilities are unknown: ${meta.sync_error}`);
    if (waited >= SYNC_WAIT_MS)
      throw new FatalError(`its integration's capabilities were not synced within ${SYNC_WAIT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, SYNC_POLL_MS));
  }
}

export interface CreatedKey {
  name: string;
  id: string;
  key: string;
}

/**
 * Runs the plan's requests in order. Keys created before a failure are still returned through
 * `onKey` at once, so that a failure half-way loses none of them.
 */
export async function executePlan(
  client: Client,
  steps: readonly Step[],
  onKey: (key: CreatedKey) => void,
  onApplied: (step: Step) => void = () => undefined,
): Promise<void> {
  const todo = steps.filter((s) => s.request);
  const progress = createProgress('applying');
  let done = 0;
  try {
    for (const s of todo) {
      progress.update(done, todo.length, `${s.action} ${s.kind} ${s.name}`);
      // Only the answer to an API key's create is read: it is the new key, shown this once.
      let body: Omit<CreatedKey, 'name'>;
      try {
        if (s.awaits) await waitForSync(client, s.awaits);
        body = await client.request<Omit<CreatedKey, 'name'>>(s.request!.method, s.request!.path, {
          body: s.request!.body,
        });
        if (s.then) await client.request(s.then.method, s.then.path, { body: s.then.body });
      } catch (error) {
        throw stepFailed(s, error, done);
      }
      if (s.kind === 'api_key' && s.action === 'create') onKey({ name: s.name, id: body.id, key: body.key });
      onApplied(s);
      done++;
    }
  } finally {
    progress.done();
  }
}

/** Adds keys to a JSON file only its owner can read (0600); keys already in it are kept. */
export function writeKeysFile(path: string, keys: readonly CreatedKey[]): void {
  let existing: CreatedKey[] = [];
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { keys?: CreatedKey[] };
    if (Array.isArray(parsed.keys)) existing = parsed.keys;
  } catch {
    // absent or not ours: start afresh
  }
  const ids = new Set(keys.map((k) => k.id));
  writeFileSync(path, `${JSON.stringify({ keys: [...existing.filter((k) => !ids.has(k.id)), ...keys] }, null, 2)}\n`, {
    mode: 0o600,
  });
  chmodSync(path, 0o600);
}
