import { z } from 'zod';
import type { Principal } from '../auth/principal.js';
import { AppError } from '../lib/errors.js';
import type { PromptLookup, PromptRun } from '../prompts/index.js';
import { ENDPOINT_PATHS } from '../providers/endpoints.js';
import type { GatewayReply, GatewayRequest, GatewayRoute } from './exchange.js';
import { modelMayRoute, parseModelRoute } from './model-route.js';
import { chatCompletionBody, completionBody } from './request-schemas.js';

/** What the gateway needs of prompts: the lookup, and whether a caller may see templates. */
export interface GatewayPrompts {
  lookup: PromptLookup;
  /** The security settings' view rule for prompts (members/managersViewPrompts); render needs it. */
  canView(principal: Principal): Promise<boolean>;
}

const variables = z.record(z.string(), z.unknown()).describe('The values of the template variables.');
const hyperparameters = z
  .record(z.string(), z.unknown())
  .optional()
  .describe('Request fields over the stored ones (temperature, max_tokens, model, …); also accepted at the top level.');

/** Loose: other top-level fields are hyperparameters, as the reference API takes them. */
export const promptRenderBody = z.looseObject({ variables, hyperparameters });
export const promptCompletionBody = z.looseObject({
  variables,
  stream: z.boolean().optional(),
  hyperparameters,
});
export const promptRunParams = z.object({
  promptId: z.string().min(1).max(320).describe('Id or slug, optionally `@<version>`, `@latest` or `@<label>`.'),
});

type RunBody = z.infer<typeof promptCompletionBody>;
/** The gateway pipeline; `received` is the request as it came (the prompt route's), `sent` the rendered one. */
type Pipeline = (
  route: GatewayRoute,
  sent: GatewayRequest,
  reply: GatewayReply,
  received: GatewayRequest,
) => Promise<unknown>;

/** The top-level fields besides variables, and `hyperparameters`, as one set of overrides. */
function overrides(body: RunBody): Record<string, unknown> {
  const { variables: _variables, hyperparameters: nested, ...top } = body;
  return { ...top, ...(nested ?? {}) };
}

/**
 * The headers a prompt run goes with: the caller's, plus the prompt's provider when the caller
 * names none and the model is not `@slug/model` (which chooses its provider itself). A config
 * wins over a provider; `@slug` is a stored provider, another name a virtual key.
 */
function runHeaders(run: PromptRun, headers: GatewayRequest['headers']): GatewayRequest['headers'] {
  const out = { ...headers };
  for (const name of ['content-length', 'transfer-encoding']) delete out[name];
  if (!modelMayRoute(out) || parseModelRoute(run.rendered.body.model)) return out;
  const { config_id: configId, virtual_key: virtualKey } = run.version;
  if (configId) out['x-service-config'] = configId;
  else if (virtualKey?.startsWith('@')) out['x-service-provider'] = virtualKey;
  else if (virtualKey) out['x-service-virtual-key'] = virtualKey;
  return out;
}

/** The rendered body against the gateway's own schema of the route, as a chat request would be. */
function checkBody(endpoint: 'chatComplete' | 'complete', body: Record<string, unknown>): void {
  const result = (endpoint === 'chatComplete' ? chatCompletionBody : completionBody).safeParse(body);
  if (result.success) return;
  const issue = result.error.issues[0]!;
  const param = issue.path.map(String).join('.') || 'body';
  throw new AppError('INVALID_REQUEST', `The rendered request is invalid: ${param}: ${issue.message}`, { param });
}

/**
 * `POST /v1/prompts/{id}/render` and `/completions`. Render answers the request body a prompt
 * makes; completions hands that body to the gateway pipeline as a chat (or text) completion,
 * so that limits, guardrails, cache, logs and streaming apply as to any request.
 */
export function createPromptRunner(prompts: GatewayPrompts, pipeline: Pipeline) {
  const caller = (principal: Principal) => ({
    organisationId: principal.organisationId,
    workspaceId: principal.workspaceId,
  });

  return {
    async render(request: GatewayRequest, ref: string, body: RunBody) {
      const principal = request.principal!;
      if (!(await prompts.canView(principal)))
        throw new AppError(
          'ROLE_NOT_ALLOWED',
          `The security settings of this workspace do not let ${principal.workspaceRole}s see prompts.`,
        );
      const run = await prompts.lookup.prepare(caller(principal), ref, {
        variables: body.variables,
        hyperparameters: overrides(body),
      });
      return { success: true as const, data: run.rendered.body };
    },

    async run(request: GatewayRequest, reply: GatewayReply, ref: string, body: RunBody) {
      const run = await prompts.lookup.prepare(caller(request.principal!), ref, {
        variables: body.variables,
        hyperparameters: overrides(body),
      });
      const { endpoint, body: json } = run.rendered;
      checkBody(endpoint, json);
      const sent: GatewayRequest = {
        id: request.id,
        method: 'POST',
        url: `/v1${ENDPOINT_PATHS[endpoint].path}`,
        headers: runHeaders(run, request.headers),
        body: json,
        rawBody: Buffer.from(JSON.stringify(json)),
        principal: request.principal,
        prompt: {
          id: run.prompt.id,
          version: run.version.version,
          label: run.label,
          path: request.url.split('?')[0] ?? request.url,
          workspaceId: run.prompt.workspace_id,
        },
      };
      return pipeline({ endpointType: endpoint, body: 'json' }, sent, reply, request);
    },
  };
}
