import { expect } from 'vitest';
import { WORKSPACE_SCOPES } from '../../src/auth/scopes.js';
import type { Clock } from '../../src/lib/clock.js';
import { addUser, createWorkspace, createWorkspaceKey } from './fixtures.js';
import { startGateway } from './gateway.js';
import { apiClient, type ApiClient, type JsonResponse } from './http.js';

export interface Tenant {
  id: string;
  slug: string;
  userId: string;
  keyId: string;
  key: string;
  client: ApiClient;
}

/**
 * The real gateway with the mock OpenAI upstream, and two workspaces (team-a, team-b), each with
 * a workspace admin and a workspace key of theirs holding every workspace scope.
 */
export async function startTenantPair(options: { clock?: Clock } = {}) {
  const g = await startGateway(options.clock ? { clock: options.clock } : {});
  const organisationId = g.server.bootstrap.organisationId;
  const tenant = async (name: string, slug: string): Promise<Tenant> => {
    const workspace = await createWorkspace(g.admin, name, slug);
    const userId = await addUser(g.server.db, organisationId, 'member', [{ workspaceId: workspace.id, role: 'admin' }]);
    const key = await createWorkspaceKey(g.admin, {
      workspace_id: slug,
      scopes: [...WORKSPACE_SCOPES],
      user_id: userId,
      name: `${slug} key`,
    });
    return { id: workspace.id, slug, userId, keyId: key.id, key: key.key, client: apiClient(g.baseUrl, key.key) };
  };
  const a = await tenant('Team A', 'team-a');
  const b = await tenant('Team B', 'team-b');
  return { g, organisationId, a, b };
}

export const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(32) }], max_tokens: 5 };

/** Asserts a refusal: the status, the error code and (when given) the parameter it names. */
export function expectRefused(res: JsonResponse, status: number, code: string, param?: string | null): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
  if (param !== undefined) expect(res.body.error.param).toBe(param);
}
