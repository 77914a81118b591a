import { changedFields, covers, maskSecret, pick, same, shownConfigurations } from './compare.js';
import { planCatalogue, type CatalogueState } from './plan-models.js';
import type { ApplyFile } from './schema.js';
import { planGuardrails, type GuardrailRow } from './guardrails.js';
import { planPrompts, type PromptState } from './prompts.js';
import { planSecretReferences, type SecretReferenceRow } from './secret-references.js';
import { planTools, type ToolState } from './plan-tools.js';
import type {
  Action,
  ApiKeyRow,
  ConfigRow,
  DeploymentRow,
  IntegrationRow,
  Kind,
  PolicyRow,
  ProviderRow,
  Resource,
  Step,
  WorkspaceRow,
} from './plan-types.js';

export type {
  Action,
  ApiKeyRow,
  ConfigRow,
  DeploymentRow,
  IntegrationRow,
  Kind,
  PolicyRow,
  ProviderRow,
  Request,
  Resource,
  Step,
  WorkspaceRow,
} from './plan-types.js';

export interface CurrentState extends CatalogueState {
  workspaces: WorkspaceRow[];
  integrations: IntegrationRow[];
  providers: ProviderRow[];
  rateLimits: PolicyRow[];
  usageLimits: PolicyRow[];
  apiKeys: ApiKeyRow[];
  /**
   * Active and archived configs; those the file names (see `findConfig`) carry `config`, their
   * latest version's object.
   */
  configs?: ConfigRow[];
  /** Active deployments (when the file has some). */
  deployments?: DeploymentRow[];
  /** Active guardrails with their checks and actions (those the file names). */
  guardrails?: GuardrailRow[];
  /** Prompt labels, collections, partials and prompts the file names. */
  prompts?: PromptState;
  /** Active secret references (when the file has some). */
  secretReferences?: SecretReferenceRow[];
  /** MCP and agent integrations and servers, with what the file's entries switch. */
  tools?: ToolState;
}

export class PlanError extends Error {}

const enc = encodeURIComponent;
const defined = (value: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));

function step(
  kind: Kind,
  name: string,
  current: Resource | undefined,
  desired: Record<string, unknown>,
  create: Step['request'],
  updatePath: string,
  changes: string[],
  fields: Record<string, unknown>,
): Step {
  if (!current) return { kind, name, action: 'create', changes: Object.keys(defined(desired)), request: create! };
  if (changes.length === 0) return { kind, name, action: 'unchanged', changes };
  return {
    kind,
    name,
    action: 'update',
    changes,
    request: { method: 'PUT', path: updatePath, body: pick(fields, changes) },
  };
}

/**
 * The config a file entry means: the active one with its slug, otherwise the archived one with
 * that slug changed last (which apply restores when the file says `status: active`).
 */
export function findConfig(rows: readonly ConfigRow[], slug: string): ConfigRow | undefined {
  const named = rows.filter((row) => row.slug === slug);
  const archived = named
    .filter((row) => row.status === 'archived')
    .sort((a, b) => String(b.last_updated_at).localeCompare(String(a.last_updated_at)));
  return named.find((row) => row.status === 'active') ?? archived[0];
}

/**
 * Compares the file with the server and says, in dependency order (workspaces → secret references
 * → integrations → providers → guardrails → configs → deployments → MCP and agent integrations and
 * servers → policies → keys), what would be created,
 * updated or left alone.
 * Pure: the caller fetched `current` and runs the requests.
 */
export function planApply(file: ApplyFile, current: CurrentState): Step[] {
  const problems: string[] = [];
  const wsById = new Map(current.workspaces.map((w) => [w.id, w.slug]));
  const defaultWs = current.workspaces.find((w) => w.is_default)?.slug ?? 'default';
  const knownWs = new Set([...wsById.values(), ...file.workspaces.map((w) => w.slug)]);
  const intById = new Map(current.integrations.map((i) => [i.id, i.slug]));
  const knownInt = new Set([...intById.values(), ...file.integrations.map((i) => i.slug)]);
  const wsOf = (row: { workspace_id: string | null }) =>
    row.workspace_id ? (wsById.get(row.workspace_id) ?? row.workspace_id) : null;
  const needWs = (what: string, slug: string) => {
    if (!knownWs.has(slug)) problems.push(`${what}: workspace ${slug} does not exist and is not in the file`);
    return slug;
  };
  const steps: Step[] = [];

  for (const w of file.workspaces) {
    const found = current.workspaces.find((row) => row.slug === w.slug);
    // The server answers a workspace's budget as an array of at most one; the file names it as one object.
    const now =
      found && Array.isArray(found.usage_limits)
        ? { ...found, usage_limits: (found.usage_limits as unknown[])[0] ?? null }
        : found;
    if (now && now.status === 'archived')
      problems.push(`workspace ${w.slug} is archived; unarchive it first (svcgw workspaces unarchive ${w.slug})`);
    const fields = defined({ name: w.name, description: w.description, usage_limits: w.usage_limits });
    steps.push(
      step(
        'workspace',
        w.slug,
        now,
        fields,
        { method: 'POST', path: '/v1/workspaces', body: { slug: w.slug, ...fields } },
        `/v1/workspaces/${enc(w.slug)}`,
        now ? changedFields(now, fields) : [],
        fields,
      ),
    );
  }

  // Before integrations, which may map them.
  steps.push(
    ...planSecretReferences(
      file.secret_references,
      current.secretReferences ?? [],
      (id) => wsById.get(id) ?? id,
      needWs,
      problems,
    ),
  );

  for (const i of file.integrations) {
    const now = current.integrations.find((row) => row.slug === i.slug);
    if (now && now.ai_provider_id !== i.ai_provider_id)
      problems.push(
        `integration ${i.slug}: ai_provider_id is ${now.ai_provider_id} on the server and cannot change; give the new one another slug`,
      );
    const fields = defined({
      name: i.name,
      description: i.description,
      key: i.key,
      configurations: i.configurations,
      tags: i.tags,
    });
    const changes = now
      ? changedFields(now, fields, {
          key: (_c, desired) =>
            desired === null ? now.masked_key === null : now.masked_key === maskSecret(desired as string),
          configurations: (c, desired) => same(c, shownConfigurations(desired as Record<string, unknown>)),
          tags: same,
        })
      : [];
    const create = {
      method: 'POST' as const,
      path: '/v1/integrations',
      body: { slug: i.slug, ai_provider_id: i.ai_provider_id, ...fields, create_default_provider: false },
    };
    steps.push(
      step(
        'integration',
        i.slug,
        now,
        { ai_provider_id: i.ai_provider_id, ...fields },
        create,
        `/v1/integrations/${enc(i.slug)}`,
        changes,
        fields,
      ),
    );
  }

  for (const p of file.providers) {
    const ws = needWs(`provider ${p.slug}`, p.workspace ?? defaultWs);
    if (!knownInt.has(p.integration))
      problems.push(`provider ${p.slug}: integration ${p.integration} does not exist and is not in the file`);
    const now = current.providers.find((row) => row.slug === p.slug && wsOf(row) === ws);
    if (now && intById.get(now.integration_id) !== p.integration)
      problems.push(
        `provider ${ws}/${p.slug}: its integration is ${intById.get(now.integration_id) ?? now.integration_id} on the server and cannot change`,
      );
    const fields = defined({ name: p.name, note: p.note, tags: p.tags });
    const create = {
      method: 'POST' as const,
      path: '/v1/providers',
      body: { slug: p.slug, integration_id: p.integration, workspace_id: ws, ...fields },
    };
    steps.push(
      step(
        'provider',
        `${ws}/${p.slug}`,
        now,
        { integration: p.integration, ...fields },
        create,
        `/v1/providers/${enc(p.slug)}?workspace_id=${enc(ws)}`,
        now ? changedFields(now, fields, { tags: same }) : [],
        fields,
      ),
    );
  }

  // Before configs, which may name them by slug.
  steps.push(...planGuardrails(file.guardrails, current.guardrails ?? [], wsOf, needWs, problems));

  for (const c of file.configs) {
    const ws = needWs(
      `config ${c.slug}`,
      c.workspace === undefined ? defaultWs : (wsById.get(c.workspace) ?? c.workspace),
    );
    const now = findConfig(current.configs ?? [], c.slug);
    if (now && wsOf(now) !== ws)
      problems.push(`config ${c.slug}: its workspace is ${wsOf(now)} on the server and cannot change`);
    // A changed object is a new version; name and status change in place. Objects compare as
    // canonical JSON, so key order and formatting in the file do not matter.
    const changes = now
      ? [
          ...(now.name === c.name ? [] : ['name']),
          ...(same(now.config, c.config) ? [] : ['config']),
          ...(now.status === c.status ? [] : ['status']),
        ]
      : [];
    const fields = { name: c.name, config: c.config, status: c.status };
    const create = {
      method: 'POST' as const,
      path: '/v1/configs',
      body: { slug: c.slug, name: c.name, workspace_id: ws, config: c.config },
    };
    // `:slug` names the active config; an archived one is reached by its id.
    const updatePath = `/v1/configs/${now?.status === 'archived' ? now.id : enc(c.slug)}`;
    const planned = step(
      'config',
      c.slug,
      now,
      defined({
        workspace: ws,
        name: c.name,
        config: c.config,
        status: c.status === 'archived' ? c.status : undefined,
      }),
      create,
      updatePath,
      changes,
      fields,
    );
    if (planned.action === 'create' && c.status === 'archived')
      planned.then = { method: 'PUT', path: `/v1/configs/${enc(c.slug)}`, body: { status: 'archived' } };
    steps.push(planned);
  }

  // After configs and workspaces, which deployments name.
  for (const d of file.deployments) {
    for (const w of d.allowed_workspaces ?? []) needWs(`deployment ${d.slug}`, w);
    const now = current.deployments?.find((row) => row.slug === d.slug);
    const fields = defined({
      name: d.name,
      type: d.type,
      description: d.description,
      config_id: d.config,
      allowed_workspaces: d.allowed_workspaces,
      rate_limits: d.rate_limits,
      usage_limits: d.usage_limits,
    });
    // The server shows its config and workspaces by id with their slugs; the file names slugs.
    const changes = now
      ? changedFields(now, fields, {
          config_id: (_c, desired) => (desired ?? null) === now.config_slug,
          allowed_workspaces: (_c, desired) =>
            desired === null
              ? now.allowed_workspaces === null
              : same(now.allowed_workspaces?.map((w) => w.slug).sort() ?? null, [...(desired as string[])].sort()),
        })
      : [];
    steps.push(
      step(
        'deployment',
        d.slug,
        now,
        fields,
        { method: 'POST', path: '/v1/deployments', body: { slug: d.slug, ...fields } },
        `/v1/deployments/${enc(d.slug)}`,
        changes,
        fields,
      ),
    );
  }

  // After guardrails, which MCP servers name.
  if (current.tools) steps.push(...planTools(file, current.tools, { wsOf, needWs, defaultWs, problems }));

  const catalogue = planCatalogue(
    file,
    { ...current, workspaceSlugOf: (id) => (id ? (wsById.get(id) ?? id) : null) },
    problems,
  );
  const firstProvider = steps.findIndex((s) => s.kind === 'provider');
  steps.splice(firstProvider < 0 ? steps.length : firstProvider, 0, ...catalogue.modelSteps);
  steps.push(...catalogue.aliasSteps);
  // After configs and providers, which prompts may name.
  if (current.prompts) steps.push(...planPrompts(file, current.prompts, wsOf, needWs, defaultWs, problems));

  for (const r of file.policies.rate_limits) {
    const ws = needWs(`rate-limits policy ${r.name}`, r.workspace ?? defaultWs);
    const matches = current.rateLimits.filter((row) => row.name === r.name && wsOf(row) === ws);
    if (matches.length > 1)
      problems.push(
        `rate-limits policy ${ws}/${r.name}: ${matches.length} active policies have this name; apply knows policies by name`,
      );
    const now = matches[0];
    const fields = { conditions: r.conditions, group_by: r.group_by, type: r.type, unit: r.unit, value: r.value };
    const create = {
      method: 'POST' as const,
      path: '/v1/policies/rate-limits',
      body: { name: r.name, workspace_id: ws, ...fields },
    };
    steps.push(
      step(
        'rate_limits_policy',
        `${ws}/${r.name}`,
        now,
        fields,
        create,
        `/v1/policies/rate-limits/${now?.id}`,
        now ? changedFields(now, fields) : [],
        fields,
      ),
    );
  }

  for (const u of file.policies.usage_limits) {
    const ws = needWs(`usage-limits policy ${u.name}`, u.workspace ?? defaultWs);
    const matches = current.usageLimits.filter((row) => row.name === u.name && wsOf(row) === ws);
    if (matches.length > 1)
      problems.push(
        `usage-limits policy ${ws}/${u.name}: ${matches.length} active policies have this name; apply knows policies by name`,
      );
    const now = matches[0];
    if (now && now.type !== u.type)
      problems.push(`usage-limits policy ${ws}/${u.name}: type is ${now.type} on the server and cannot change`);
    const fields = defined({
      conditions: u.conditions,
      group_by: u.group_by,
      credit_limit: u.credit_limit,
      alert_threshold: u.alert_threshold,
      periodic_reset: u.periodic_reset,
      periodic_reset_days: u.periodic_reset_days,
    });
    const create = {
      method: 'POST' as const,
      path: '/v1/policies/usage-limits',
      body: { name: u.name, workspace_id: ws, type: u.type, ...fields },
    };
    steps.push(
      step(
        'usage_limits_policy',
        `${ws}/${u.name}`,
        now,
        { type: u.type, ...fields },
        create,
        `/v1/policies/usage-limits/${now?.id}`,
        now ? changedFields(now, fields) : [],
        fields,
      ),
    );
  }

  for (const k of file.api_keys) {
    const ws = k.type === 'admin' ? null : needWs(`API key ${k.name}`, k.workspace ?? defaultWs);
    const serverType = k.type === 'admin' ? 'organisation-service' : k.type;
    const matches = current.apiKeys.filter(
      (row) => row.name === k.name && row.status === 'active' && row.type === serverType && wsOf(row) === ws,
    );
    if (matches.length > 1)
      problems.push(
        `API key ${ws ?? 'admin'}/${k.name}: ${matches.length} active keys have this name; apply knows keys by name`,
      );
    const now = matches[0];
    const fields = defined({
      scopes: k.scopes,
      description: k.description,
      expires_at: k.expires_at,
      rate_limits: k.rate_limits,
      usage_limits: k.usage_limits,
    });
    const path =
      k.type === 'admin'
        ? '/v1/api-keys/organisation/service'
        : `/v1/api-keys/workspace/${k.type === 'workspace-user' ? 'user' : 'service'}`;
    const create = {
      method: 'POST' as const,
      path,
      body: defined({ name: k.name, workspace_id: ws ?? undefined, user_id: k.user_id, ...fields }),
    };
    const changes = now
      ? changedFields(now, fields, {
          scopes: (c, d) => same([...(c as string[])].sort(), [...(d as string[])].sort()),
          expires_at: (c, d) => (d === null ? c === null : covers(c, d)),
        })
      : [];
    steps.push(
      step('api_key', `${ws ?? 'admin'}/${k.name}`, now, fields, create, `/v1/api-keys/${now?.id}`, changes, fields),
    );
  }

  if (problems.length > 0) throw new PlanError(problems.join('\n'));
  return steps;
}

export function summarise(steps: readonly Step[]): Record<Action, number> {
  const counts: Record<Action, number> = { create: 0, update: 0, unchanged: 0 };
  for (const s of steps) counts[s.action]++;
  return counts;
}
