import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid } from '../../lib/errors.js';
import type { AgentIntegrationRepository, AgentIntegrationRow } from '../../storage/repositories/agent-integrations.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { assertKnown } from '../tool-servers/switches.js';
import { activeWorkspaces, workspaceAccessList, workspaceSwitches } from '../tool-servers/workspace-access.js';
import type { IntegrationFinder } from './integration-finder.js';
import type { PageQuery, SkillObject, SkillsBody, WorkspaceAccessBody, WorkspaceAccessObject } from './schemas.js';

/**
 * What an agent integration may be used for: its skills (enabled or not, for every server) and,
 * for an organisation integration, the workspaces that may use it.
 */
export function createAgentIntegrationAccess(deps: {
  integrations: AgentIntegrationRepository;
  workspaces: WorkspaceRepository;
  finder: IntegrationFinder;
  clock: Clock;
  onChange: () => void;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();
  const actor = (principal: Principal) => principal.userId ?? principal.keyId;
  const { find, findChangeable } = deps.finder;

  return {
    async skills(principal: Principal, idOrSlug: string, page: PageQuery) {
      const row = await find(principal, idOrSlug);
      const all = (await deps.integrations.listSkills(row.id)).map(skillOf);
      const start = page.current_page * page.page_size;
      return {
        total: all.length,
        data: all.slice(start, start + page.page_size),
        counts: { total: all.length, enabled: all.filter((skill) => skill.enabled).length },
      };
    },

    async setSkills(principal: Principal, idOrSlug: string, body: SkillsBody): Promise<AgentIntegrationRow> {
      const row = await findChangeable(principal, idOrSlug);
      const known = new Set((await deps.integrations.listSkills(row.id)).map((skill) => skill.skill_id));
      assertKnown(
        body.skills,
        known,
        (skill) => skill.id,
        (skill, i) =>
          invalid(
            `skills[${i}].id`,
            `The agent's card has no skill ${skill.id} (as last synced); sync the integration first.`,
          ),
      );
      await deps.integrations.setSkills(
        row.id,
        body.skills.map((s) => ({ skillId: s.id, enabled: s.enabled })),
      );
      await deps.integrations.update(row.id, { updated_by: actor(principal), last_updated_at: now() });
      deps.onChange();
      return row;
    },

    async workspaceAccess(principal: Principal, idOrSlug: string): Promise<WorkspaceAccessObject> {
      const row = await organisationOwned(principal, idOrSlug);
      const [switches, workspaces] = await Promise.all([
        deps.integrations.listWorkspaceAccess(row.id),
        activeWorkspaces(deps.workspaces, principal.organisationId),
      ]);
      return workspaceAccessList(row, workspaces, switches);
    },

    async setWorkspaceAccess(
      principal: Principal,
      idOrSlug: string,
      body: WorkspaceAccessBody,
    ): Promise<AgentIntegrationRow> {
      const row = await organisationOwned(principal, idOrSlug);
      if (row.status !== 'active') throw invalid('id', `Agent integration ${row.slug} is archived.`);
      const entries = await workspaceSwitches(
        deps.workspaces,
        principal.organisationId,
        body.workspaces,
        (id, param) => new AppError('NOT_FOUND', `Workspace ${id} not found.`, { param }),
      );
      await deps.integrations.setWorkspaceAccess(row.id, entries, {
        replace: body.override_existing_workspace_access,
        ...(body.global_workspace_access ? { global: body.global_workspace_access.enabled } : {}),
        patch: { updated_by: actor(principal), last_updated_at: now() },
      });
      deps.onChange();
      return row;
    },
  };

  async function organisationOwned(principal: Principal, idOrSlug: string): Promise<AgentIntegrationRow> {
    const row = await find(principal, idOrSlug);
    if (row.workspace_id !== null)
      throw invalid(
        'id',
        `Agent integration ${row.slug} belongs to one workspace; workspace access is for organisation integrations.`,
      );
    return row;
  }
}

export type AgentIntegrationAccess = ReturnType<typeof createAgentIntegrationAccess>;

/** A skill row as the API shows it. */
export function skillOf(row: {
  skill_id: string;
  name: string;
  description: string | null;
  details: string;
  enabled: number;
}): SkillObject {
  const details = JSON.parse(row.details) as Pick<SkillObject, 'tags' | 'examples' | 'input_modes' | 'output_modes'>;
  return {
    id: row.skill_id,
    name: row.name,
    description: row.description,
    tags: details.tags ?? [],
    examples: details.examples ?? [],
    input_modes: details.input_modes ?? [],
    output_modes: details.output_modes ?? [],
    enabled: row.enabled === 1,
  };
}
