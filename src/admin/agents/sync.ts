import type { CardRead } from '../../agents/card-reader.js';
import { cardFacts, cardUrlOf, rpcOriginProblem, type CardFacts } from '../../agents/card.js';
import type { AgentIntegrationRow, SkillInput, SyncColumns } from '../../storage/repositories/agent-integrations.js';
import type { MetadataObject } from './schemas.js';

/** Reads an agent's card: its location and the integration's credentials as headers. */
export type CardReader = (target: { cardUrl: string; headers: Record<string, string> }) => Promise<CardRead>;

/**
 * What a card read means for an integration: the sync columns, and the card's skills (null
 * when the card could not be read: the card and skills known so far stay). A card whose JSON-RPC
 * endpoint svcgw will not use (none, or on another origin without `rpc_url`) is kept, skills
 * included, with the sync in error saying why.
 */
export function syncFrom(
  read: CardRead,
  integration: Pick<AgentIntegrationRow, 'url' | 'rpc_url'>,
  now: string,
): { sync: Partial<SyncColumns>; skills: SkillInput[] | null } {
  // A failed read keeps what the last good one found: an agent that is down for a moment keeps working once it is back.
  if (!read.ok) return { sync: { sync_status: 'error', sync_error: read.error, last_synced_at: now }, skills: null };
  const facts = cardFacts(read.card);
  const problem = endpointProblem(facts, integration);
  return {
    sync: {
      sync_status: problem === null ? 'ok' : 'error',
      sync_error: problem,
      last_synced_at: now,
      card: read.json,
      card_rpc_url: problem === null || integration.rpc_url !== null ? facts.rpcUrl : null,
      agent_name: facts.name.slice(0, 255),
      agent_version: facts.version ? facts.version.slice(0, 64) : null,
      protocol_version: facts.protocolVersion,
    },
    skills: facts.skills.map((skill, position) => ({
      skill_id: skill.id,
      position,
      name: skill.name,
      description: skill.description,
      details: JSON.stringify({
        tags: skill.tags,
        examples: skill.examples,
        input_modes: skill.input_modes,
        output_modes: skill.output_modes,
      }),
    })),
  };
}

function endpointProblem(facts: CardFacts, integration: Pick<AgentIntegrationRow, 'url' | 'rpc_url'>): string | null {
  if (integration.rpc_url !== null) return null;
  if (facts.rpcUrl === null)
    return 'The card names no JSON-RPC interface, the only binding the gateway relays; set rpc_url if the agent has one.';
  return rpcOriginProblem(facts.rpcUrl, integration.url);
}

/** The sync columns of an integration whose agent moved (another URL): nothing known of it yet. */
export const FORGOTTEN_CARD: SyncColumns = {
  sync_status: 'never',
  sync_error: null,
  last_synced_at: null,
  card: null,
  card_rpc_url: null,
  agent_name: null,
  agent_version: null,
  protocol_version: null,
};

/** The metadata answer of an integration, from its sync columns. */
export function metadataOf(row: AgentIntegrationRow, skillsCount: number): MetadataObject {
  let facts: CardFacts | null = null;
  if (row.card) {
    try {
      facts = cardFacts(JSON.parse(row.card) as Parameters<typeof cardFacts>[0]);
    } catch {
      facts = null;
    }
  }
  return {
    agent_name: row.agent_name,
    agent_description: facts?.description || null,
    agent_version: row.agent_version,
    protocol_version: row.protocol_version,
    rpc_url: row.rpc_url ?? row.card_rpc_url,
    card_url: cardUrlOf(row.url),
    capability_flags: facts?.capabilities ?? {
      streaming: false,
      push_notifications: false,
      extended_agent_card: false,
    },
    skills_count: skillsCount,
    sync_status: row.sync_status,
    last_synced_at: row.last_synced_at,
    sync_error: row.sync_error,
  };
}
