import type { AgentCard } from '@a2a-js/sdk';
import { GATEWAY_KEY_HEADER, WELL_KNOWN_CARD_PATH } from './protocol.js';

/** A skill as an agent's card describes it. */
export interface SkillFacts {
  id: string;
  name: string;
  description: string | null;
  tags: string[];
  examples: string[];
  input_modes: string[];
  output_modes: string[];
}

/** What svcgw keeps of a card it read. */
export interface CardFacts {
  name: string;
  description: string;
  version: string;
  /** The JSON-RPC endpoint the card names (its first JSON-RPC interface), if any. */
  rpcUrl: string | null;
  protocolVersion: string | null;
  skills: SkillFacts[];
  capabilities: { streaming: boolean; push_notifications: boolean; extended_agent_card: boolean };
}

/**
 * Where an agent's card is: the URL itself when it names a JSON file, else the well-known path
 * under it (so that an agent mounted under a path prefix is found there).
 */
export function cardUrlOf(url: string): string {
  const parsed = new URL(url);
  if (parsed.pathname.endsWith('.json')) return parsed.toString();
  if (!parsed.pathname.endsWith('/')) parsed.pathname += '/';
  parsed.search = '';
  return new URL(WELL_KNOWN_CARD_PATH, parsed).toString();
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

const isJsonRpc = (binding: unknown) => typeof binding === 'string' && binding.toUpperCase() === 'JSONRPC';

/** The facts of a card the SDK read (in the 1.0 shape, whatever version the agent spoke). */
export function cardFacts(card: AgentCard): CardFacts {
  const rpc = (card.supportedInterfaces ?? []).find((i) => isJsonRpc(i.protocolBinding));
  return {
    name: card.name,
    description: card.description,
    version: card.version,
    rpcUrl: rpc?.url || null,
    protocolVersion: rpc?.protocolVersion || null,
    skills: (card.skills ?? [])
      .filter((skill) => typeof skill.id === 'string' && skill.id.length > 0)
      .map((skill) => ({
        id: skill.id.slice(0, 255),
        name: (skill.name || skill.id).slice(0, 255),
        description: skill.description ? skill.description.slice(0, 4096) : null,
        tags: strings(skill.tags),
        examples: strings(skill.examples),
        input_modes: strings(skill.inputModes),
        output_modes: strings(skill.outputModes),
      })),
    capabilities: {
      streaming: card.capabilities?.streaming === true,
      push_notifications: card.capabilities?.pushNotifications === true,
      extended_agent_card: card.capabilities?.extendedAgentCard === true,
    },
  };
}

/**
 * Why svcgw will not send an integration's credentials to the JSON-RPC endpoint its card names,
 * or null when it will: only to the origin of the integration's own URL, so that a card cannot
 * send them elsewhere. An operator who means another address sets `rpc_url`.
 */
export function rpcOriginProblem(rpcUrl: string, integrationUrl: string): string | null {
  let rpc: URL;
  try {
    rpc = new URL(rpcUrl);
  } catch {
    return `The card names a JSON-RPC endpoint that is not a URL (${rpcUrl.slice(0, 200)}).`;
  }
  if (rpc.protocol !== 'http:' && rpc.protocol !== 'https:')
    return `The card names a JSON-RPC endpoint that is not http(s) (${rpc.protocol}).`;
  const origin = new URL(integrationUrl).origin;
  if (rpc.origin !== origin)
    return `The card names its JSON-RPC endpoint on ${rpc.origin}, not on the integration's origin ${origin}; svcgw sends the integration's credentials only there. Set rpc_url to use that endpoint.`;
  return null;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The card the gateway serves for an agent server, from the agent's own card (1.0 or 0.3
 * shape): every JSON-RPC interface points at the gateway (the only binding it relays; the
 * others are dropped), skills the server hides are gone, the security section asks for an svcgw
 * key instead of the agent's own credentials, and signatures (made over the agent's card, now
 * changed) are dropped.
 */
export function servedCard(card: Json, options: { gatewayUrl: string; hidden: (skillId: string) => boolean }): Json {
  const served: Json = { ...card };
  const legacy = typeof card.url === 'string' || typeof card.protocolVersion === 'string';
  if (legacy) {
    served.url = options.gatewayUrl;
    served.preferredTransport = 'JSONRPC';
    if (Array.isArray(card.additionalInterfaces))
      served.additionalInterfaces = card.additionalInterfaces
        .filter((i) => isObject(i) && isJsonRpc(i.transport))
        .map((i) => ({ ...(i as Json), url: options.gatewayUrl }));
  }
  if (Array.isArray(card.supportedInterfaces))
    served.supportedInterfaces = card.supportedInterfaces
      .filter((i) => isObject(i) && isJsonRpc(i.protocolBinding))
      .map((i) => ({ ...(i as Json), url: options.gatewayUrl }));
  if (Array.isArray(card.skills))
    served.skills = (card.skills as unknown[])
      .filter((skill) => !(isObject(skill) && typeof skill.id === 'string' && options.hidden(skill.id)))
      .map((skill) => (isObject(skill) ? withoutSecurity(skill) : skill));
  delete served.signatures;
  delete served.security;
  delete served.securityRequirements;
  const description = `An svcgw API key with the agents.invoke scope, in the ${GATEWAY_KEY_HEADER} header.`;
  if (legacy) {
    served.securitySchemes = { svcgw: { type: 'apiKey', in: 'header', name: GATEWAY_KEY_HEADER, description } };
    served.security = [{ svcgw: [] }];
  } else {
    served.securitySchemes = {
      svcgw: { apiKeySecurityScheme: { location: 'header', name: GATEWAY_KEY_HEADER, description } },
    };
    served.securityRequirements = [{ schemes: { svcgw: { list: [] } } }];
  }
  return served;
}

function withoutSecurity(skill: Json): Json {
  const { security: _security, securityRequirements: _requirements, ...rest } = skill;
  return rest;
}
