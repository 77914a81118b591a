import { AppError } from '../../lib/errors.js';
import type { ZodApp } from '../../server/zod-app.js';
import type { WorkspaceService } from './service.js';

/**
 * Refuses, on every authenticated route (gateway included), the keys of an archived workspace.
 * It runs right after authentication; the status comes from the workspace service's short
 * cache, so the hot path reads no database. Archiving revokes nothing: unarchiving brings the
 * keys back.
 */
export function registerArchivedWorkspaceGuard(app: ZodApp, service: Pick<WorkspaceService, 'isArchived'>): void {
  app.addHook('onRequest', async (request) => {
    const workspaceId = request.principal?.workspaceId;
    if (!workspaceId) return;
    if (await service.isArchived(workspaceId)) {
      throw new AppError('WORKSPACE_ARCHIVED', 'The API key belongs to an archived workspace.');
    }
  });
}
