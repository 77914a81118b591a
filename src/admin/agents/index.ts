import { lazyService } from '../../lib/lazy.js';
import { readAgentCard } from '../../agents/card-reader.js';
import type { Dispatcher } from 'undici';
import type { ZodApp } from '../../http/zod-app.js';
import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { AgentIntegrationRepository } from '../../storage/repositories/agent-integrations.js';
import type { AgentServerRepository } from '../../storage/repositories/agent-servers.js';
import type { Repositories } from '../../storage/repositories/index.js';
import { createIntegrationFinder } from './integration-finder.js';
import { registerAgentIntegrationRoutes } from './integration-routes.js';
import { createAgentIntegrationService } from './integration-service.js';
import { registerAgentServerRoutes } from './server-routes.js';
import { createAgentServerService } from './server-service.js';
import type { CardReader } from './sync.js';

/**
 * The control plane of the agent gateway (docs/agents.md): agent integrations and agent
 * servers. `onChange` runs after every change so that the gateway's directory sees it at once.
 */
export function registerAgents(
  app: ZodApp,
  deps: {
    repos: Pick<Repositories, 'workspaces' | 'users'>;
    integrations: AgentIntegrationRepository;
    servers: AgentServerRepository;
    secretBox: SecretBox;
    clock: Clock;
    onChange: () => void;
    /** How long a card read may take. */
    cardTimeoutMs: number;
    /** The pooled upstream client (tests route it to loopback). */
    dispatcher?: Dispatcher;
  },
): void {
  const readCard: CardReader = (target) =>
    readAgentCard(target, {
      timeoutMs: deps.cardTimeoutMs,
      ...(deps.dispatcher ? { dispatcher: deps.dispatcher } : {}),
    });
  const finder = createIntegrationFinder(deps.integrations);
  const integrations = createAgentIntegrationService({
    integrations: deps.integrations,
    finder,
    workspaces: deps.repos.workspaces,
    secretBox: deps.secretBox,
    clock: deps.clock,
    onChange: deps.onChange,
  });
  const servers = createAgentServerService({
    servers: deps.servers,
    integrations: deps.integrations,
    workspaces: deps.repos.workspaces,
    users: deps.repos.users,
    clock: deps.clock,
    onChange: deps.onChange,
  });
  const access = lazyService(async () =>
    (await import('./integration-access.js')).createAgentIntegrationAccess({
      integrations: deps.integrations,
      workspaces: deps.repos.workspaces,
      finder,
      clock: deps.clock,
      onChange: deps.onChange,
    }),
  );
  registerAgentIntegrationRoutes(app, { service: integrations, access, readCard });
  registerAgentServerRoutes(app, { servers, integrations, readCard });
}
