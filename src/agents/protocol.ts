/**
 * What svcgw knows of the A2A protocol (https://a2a-protocol.org), as the official SDK
 * (@a2a-js/sdk) implements it: version 1.0, with the 0.3 JSON-RPC method names still accepted
 * by agents that keep 0.3 clients working. The gateway relays any method; these lists only say
 * which answers stream and which carry a card.
 */
// The SDK's A2A_PROTOCOL_VERSION, written out so that this module does not load the SDK
// (test/unit/agents-card.test.ts checks they agree).
export const A2A_VERSION = '1.0';

/** The endpoint type of agent gateway calls in request logs, analytics and rate-limit conditions. */
export const AGENT_ENDPOINT_TYPE = 'agent';

/** Request headers of the protocol that reach the agent unchanged (version negotiation, extensions). */
export const FORWARDED_REQUEST_HEADERS = ['a2a-version', 'a2a-extensions', 'x-a2a-extensions'] as const;
/** Answer headers of the protocol that reach the client unchanged. */
export const FORWARDED_ANSWER_HEADERS = ['a2a-version', 'a2a-extensions', 'x-a2a-extensions', 'vary'] as const;

/** Methods whose result is an agent card (1.0 and 0.3 names): the gateway rewrites it as it does the public card. */
export const CARD_METHODS: ReadonlySet<string> = new Set([
  'GetExtendedAgentCard',
  'agent/getAuthenticatedExtendedCard',
]);

/** Where a card is found under an agent's base URL (A2A's well-known path). */
export const WELL_KNOWN_CARD_PATH = '.well-known/agent-card.json';

/** The header an svcgw key travels in; the card the gateway serves tells clients to send it. */
export const GATEWAY_KEY_HEADER = 'x-service-api-key';
