import { Command } from 'commander';
import type { CreatedKey } from '../apply/execute.js';
import type { summarise, Step } from '../apply/plan.js';
import { FatalError } from '../fatal-error.js';
import { paint } from '../output.js';
import { clientCommand, examples, run, type Context } from './common.js';

const SIGN = { create: ['+', 'green'], update: ['~', 'yellow'], unchanged: ['=', 'gray'] } as const;

function planText(steps: readonly Step[]): string {
  const width = Math.max(0, ...steps.map((s) => s.kind.length));
  return steps
    .map((s) => {
      const [sign, colour] = SIGN[s.action];
      const detail = s.action === 'update' ? ` (${s.changes.join(', ')})` : '';
      return paint(
        `  ${sign} ${s.action.padEnd(9)} ${s.kind.replace(/_/g, ' ').padEnd(width)}  ${s.name}${detail}`,
        colour,
      );
    })
    .join('\n');
}

/** A complete apply file; the help shows it and a unit test parses it. */
export const APPLY_FILE_EXAMPLE = `workspaces:
  - { slug: team-a, name: Team A, description: null, usage_limits: { credit_limit: 100, periodic_reset: monthly } }
integrations:              # created without a default provider
  - { slug: openai-main, name: OpenAI, ai_provider_id: openai, key: "\${OPENAI_API_KEY}", tags: { env: prod } }
providers:
  - { slug: openai, name: OpenAI for team A, integration: openai-main, workspace: team-a }
policies:
  rate_limits:
    - { name: chat rpm, workspace: team-a, conditions: [{ key: endpoint_type, value: chatComplete }],
        group_by: [{ key: api_key }], type: requests, unit: rpm, value: 100 }
  usage_limits:
    - { name: monthly budget, workspace: team-a, conditions: [{ key: workspace_id, value: team-a }],
        group_by: [{ key: api_key }], type: cost, credit_limit: 50, alert_threshold: 40, periodic_reset: monthly }
api_keys:                  # type: workspace-service (default), workspace-user (with user_id) or admin
  - { name: ci, workspace: team-a, scopes: [completions.write, logs.list] }
`;

const FILE_EXAMPLE = `
A file (YAML or JSON; every section is optional; workspace defaults to the default workspace):
${APPLY_FILE_EXAMPLE.replace(/^/gm, '  ').trimEnd()}
configs: a section of gateway configs (docs/configs.md), known by slug; workspace is an id or a slug:
  configs:
    - slug: prod-fallback
      name: Prod fallback
      workspace: team-a
      status: active        # or archived; active when left out
      config: { strategy: { mode: fallback }, targets: [{ provider: "@openai" }, { provider: "@groq" }] }
A config whose latest version equals the file's object (as JSON with sorted keys) is left alone; a
changed object becomes a new version (PUT /v1/configs/:slug); name and status change in place. The
server validates configs: a refusal names the config's slug and each problem's path (config.targets[1].weight).
A provider key is compared by its mask (first and last four characters): a new key that keeps them is
not seen as a change. An integration's ai_provider_id, a provider's integration, a config's workspace and a
usage-limits policy's type cannot change; apply says so instead of guessing.
deployments: groups of instances started with svcgw serve --deployment <slug> (docs/deployments.md), known
by slug; its config and allowed_workspaces are named by slug:
  deployments:
    - { slug: eu-production, name: EU production, type: production, config: prod-fallback,
        allowed_workspaces: [team-a], rate_limits: [{ type: requests, unit: rpm, value: 6000 }] }
prompt_labels, prompt_collections, prompt_partials, prompts: the prompts family (docs/prompts.md), labels
known by name, the others by slug; a changed template or setting becomes a new version, made the default one.
secret_references (docs/secret-references.md), known by slug; auth_config secrets come from \${VARIABLES}
and are compared by their masks; allowed_workspaces by slug (null: every workspace):
  secret_references:
    - { slug: openai-vault, name: OpenAI in Vault, manager_type: hashicorp_vault, secret_path: secret/openai,
        auth_config: { vault_auth_type: token, vault_addr: "https://vault:8200", vault_token: "\${VAULT_TOKEN}" } }
mcp_integrations, mcp_servers, agent_integrations, agent_servers (docs/mcp.md, docs/agents.md), known by
slug; a server names its integration and workspace by slug, user_access names users by e-mail address:
  mcp_integrations:
    - { slug: github, name: GitHub, url: "https://mcp.example.com/mcp", auth_type: headers,
        configurations: { custom_headers: { Authorization: "Bearer \${GITHUB_TOKEN}" } },
        workspace_access: { global: false, workspaces: { team-a: true } },
        capabilities: [{ name: delete_repo, type: tool, enabled: false }] }
  mcp_servers:
    - { slug: team-github, name: Team GitHub, integration: github, workspace: team-a, default_user_access: deny,
        user_access: [{ user: ada@example.com, enabled: true }] }
  agent_integrations: [{ slug: research, name: Research, url: "https://agents.internal/research",
                         auth_type: bearer, configurations: { bearer_token: "\${AGENT_TOKEN}" },
                         skills: [{ id: whisper, enabled: false }] }]
  agent_servers: [{ slug: research, name: Research, integration: research, workspace: team-a }]
Capability switches of an MCP integration made in the same run wait for its first sync (at most 30 s);
a dry run cannot check them and leaves them out.`;

/** `--json`: the failure next to the report, so that a script sees both what was done and why it stopped. */
function errorObject(error: unknown) {
  const step = (error as { step?: unknown }).step;
  return {
    message: error instanceof Error ? error.message : String(error),
    exit_code: error instanceof FatalError ? error.exitCode : 1,
    ...(step ? { step } : {}),
  };
}

const counts = (c: ReturnType<typeof summarise>) =>
  `${c.create} to create, ${c.update} to update, ${c.unchanged} unchanged`;

export function applyCommand(): Command {
  return examples(
    clientCommand(
      'apply',
      'make the server match a YAML or JSON file of workspaces, secret references, integrations, providers, guardrails, configs, deployments, MCP and agent integrations and servers, prompts, policies and API keys (identified by slug, or by name for policies and keys). Idempotent: applying the same file again changes nothing. Nothing missing from the file is removed. ${VAR} in the file takes an environment variable (for provider keys).',
    )
      .summary('provision workspaces, credentials, configs, policies and keys from a file')
      .requiredOption('-f, --file <file>', 'the file (- for standard input)')
      .option(
        '--dry-run',
        "print the plan (create / update / unchanged) and change nothing; the server runs the plan's requests as this key would and rolls them back (POST /v1/dry-run), so that a dry run fails where the real run would",
      )
      .option(
        '--keys-out <file>',
        'write the API keys it creates to this JSON file (mode 0600) instead of printing them',
      )
      .action(
        run(async (ctx: Context<{ file: string; dryRun?: boolean; keysOut?: string }>) => {
          const o = ctx.opts;
          // Loaded here: zod and yaml would slow the start of every other command.
          const [
            { checkPlanOnServer, executePlan, fetchCurrentState, StepFailed, writeKeysFile },
            { readApplyFile },
            { PlanError, planApply, summarise },
          ] = await Promise.all([
            import('../apply/execute.js'),
            import('../apply/load.js'),
            import('../apply/plan.js'),
          ]);
          const file = readApplyFile(o.file);
          let steps: Step[];
          try {
            steps = planApply(file, await fetchCurrentState(ctx.client, file));
          } catch (error) {
            if (error instanceof PlanError) throw new FatalError(`${o.file} cannot be applied:\n${error.message}`);
            throw error;
          }
          const summary = summarise(steps);
          const changed = summary.create + summary.update > 0;
          const keys: CreatedKey[] = [];
          const applied = new Set<Step>();
          // Boxed, so that whatever executePlan threw is rethrown as it was, after the report.
          let failure: { error: unknown } | null = null;
          try {
            if (o.dryRun) await checkPlanOnServer(ctx.client, steps);
            else if (changed)
              await executePlan(
                ctx.client,
                steps,
                (key) => keys.push(key),
                (step) => applied.add(step),
              );
          } catch (error) {
            failure = { error };
          }
          const failed = failure?.error instanceof StepFailed ? failure.error : null;
          // What was done, counted from the steps that succeeded (not from the plan).
          const done = summarise(steps.filter((s) => s.action === 'unchanged' || applied.has(s)));
          const stepState = (s: Step) =>
            s.action === 'unchanged'
              ? 'unchanged'
              : applied.has(s)
                ? 'applied'
                : failed && failed.step.kind === s.kind && failed.step.name === s.name
                  ? 'failed'
                  : 'not applied';
          if (o.keysOut && keys.length > 0) writeKeysFile(o.keysOut, keys);
          const report = {
            file: o.file,
            dry_run: o.dryRun === true,
            changed: applied.size > 0,
            summary,
            ...(o.dryRun ? {} : { applied: done }),
            steps: steps.map((s) => ({
              kind: s.kind,
              name: s.name,
              action: s.action,
              changes: s.changes,
              ...(o.dryRun ? {} : { state: stepState(s) }),
            })),
            keys: o.keysOut ? keys.map(({ name, id }) => ({ name, id })) : keys,
            ...(o.keysOut && keys.length > 0 ? { keys_out: o.keysOut } : {}),
            ...(failure ? { error: errorObject(failure.error) } : {}),
          };
          ctx.out.result(report, () => {
            const lines = [`Plan for ${o.file}:`, planText(steps), ''];
            if (o.dryRun)
              lines.push(
                failure
                  ? `${counts(summary)}. Dry run: nothing was changed, and the real run would fail (below).`
                  : `${counts(summary)}. Dry run: nothing was changed.`,
              );
            else if (!changed)
              lines.push(`No changes: the server already matches ${o.file} (${summary.unchanged} unchanged).`);
            else
              lines.push(
                `${failure ? 'Stopped' : 'Applied'}: ${counts(done).replace('to create', 'created').replace('to update', 'updated')}${failure ? `; ${summary.create + summary.update - applied.size} not applied` : ''}.`,
              );
            if (keys.length > 0 && o.keysOut)
              lines.push(`Wrote ${keys.length} new API key${keys.length > 1 ? 's' : ''} to ${o.keysOut} (mode 0600).`);
            else if (keys.length > 0)
              lines.push(
                '',
                'New API keys, shown once (store them now):',
                ...keys.map((k) => `    ${k.name}  ${k.key}`),
              );
            return lines.join('\n');
          });
          if (failure) throw failure.error;
        }),
      ),
    [
      'svcgw apply -f svcgw.yaml --dry-run',
      'OPENAI_API_KEY=sk-… svcgw apply -f svcgw.yaml --keys-out new-keys.json',
      'svcgw apply -f svcgw.yaml --json | jq .changed',
    ],
  ).addHelpText('after', FILE_EXAMPLE);
}
