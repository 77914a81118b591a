import type { Principal } from '../../auth/principal.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import type { AgentIntegrationRepository, AgentIntegrationRow } from '../../storage/repositories/agent-integrations.js';
import { findByIdOrSlug } from '../tool-servers/rows.js';

/**
 * Finds agent integrations as a caller may see and change them. An organisation integration is
 * changed by admin keys only, and a workspace sees it once it is enabled there; a workspace
 * integration belongs to its workspace. What a caller may not see is not found.
 */
export function createIntegrationFinder(integrations: AgentIntegrationRepository) {
  /**
   * An integration the caller may see: 404 for another organisation's, another workspace's, and
   * (for a workspace key) an organisation integration not enabled for its workspace.
   */
  async function find(principal: Principal, idOrSlug: string): Promise<AgentIntegrationRow> {
    const row = await findByIdOrSlug(integrations, principal.organisationId, idOrSlug);
    if (!row || !(await visible(principal, row))) throw notFound('Agent integration', 'id');
    return row;
  }

  async function visible(principal: Principal, row: AgentIntegrationRow): Promise<boolean> {
    if (principal.workspaceId === null) return true;
    if (row.workspace_id !== null) return row.workspace_id === principal.workspaceId;
    return integrations.usableInWorkspace(row.id, principal.workspaceId);
  }

  async function findChangeable(principal: Principal, idOrSlug: string): Promise<AgentIntegrationRow> {
    const row = await find(principal, idOrSlug);
    if (row.workspace_id === null && principal.workspaceId !== null)
      throw new AppError(
        'WORKSPACE_FORBIDDEN',
        "A workspace key uses the organisation's agent integrations but cannot change them; use an admin key.",
      );
    if (row.status !== 'active') throw invalid('id', `Agent integration ${row.slug} is archived.`);
    return row;
  }

  return { find, findChangeable };
}

export type IntegrationFinder = ReturnType<typeof createIntegrationFinder>;
