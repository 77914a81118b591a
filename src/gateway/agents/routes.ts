import { z } from 'zod';
import { AGENT_ENDPOINT_TYPE, WELL_KNOWN_CARD_PATH } from '../../agents/protocol.js';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { AppError } from '../../lib/errors.js';
import { exceedsJsonDepth, jsonTooDeepMessage } from '../../lib/json-depth.js';
import type { AgentGateway } from './agent-gateway.js';

const TAG = ['Agent gateway'];
const config = { auth: { scope: 'agents.invoke', keyTypes: BOTH_KEY_TYPES }, gateway: AGENT_ENDPOINT_TYPE };
const params = z.object({
  agent: z.string().min(1).max(255).describe("The agent server's slug or id."),
});

/**
 * The agent gateway's routes (docs/agents.md): each agent server's card and JSON-RPC endpoint.
 * JSON bodies keep their bytes, which go to the agent unchanged.
 */
export async function registerAgentGatewayRoutes(app: ZodApp, gateway: AgentGateway): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      const bytes = body as Buffer;
      request.rawBody = bytes;
      if (exceedsJsonDepth(bytes)) return done(new AppError('INVALID_JSON', jsonTooDeepMessage()), undefined);
      try {
        done(null, JSON.parse(bytes.toString('utf8')));
      } catch {
        done(new AppError('INVALID_JSON', 'Request body is not valid JSON.'), undefined);
      }
    });

    scope.get(
      `/v1/agents/:agent/${WELL_KNOWN_CARD_PATH}`,
      {
        schema: {
          tags: TAG,
          summary: "An agent server's A2A agent card, pointing at the gateway",
          description:
            "The agent's own card (as the A2A-Version header asks), with its JSON-RPC interfaces at the gateway URL, the skills disabled here left out, and an svcgw key as its security scheme.",
          params,
        },
        config,
      },
      (request, reply) => gateway.card(request, reply, agentOf(request)),
    );

    scope.post(
      '/v1/agents/:agent',
      {
        schema: {
          tags: TAG,
          summary: 'Call an agent server: one A2A JSON-RPC request (message/send, message/stream, tasks/get, …)',
          description:
            'Relayed to the agent with its integration’s credentials; a streaming method’s server-sent events are relayed as they arrive. Both A2A 1.0 (SendMessage, …) and 0.3 method names pass through.',
          params,
        },
        config,
      },
      (request, reply) => gateway.call(request, reply, agentOf(request)),
    );
  });
}

/** The path's agent, as the params schema validated it (the plugin scope does not carry zod's types). */
const agentOf = (request: { params: unknown }): string => (request.params as z.infer<typeof params>).agent;
