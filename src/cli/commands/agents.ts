import { Command } from 'commander';
import { agentIntegrationsCommand } from './agent-integrations.js';
import { agentServersCommand } from './agent-servers.js';

/** `svcgw agents integrations …` and `svcgw agents servers …`: the agent gateway's resources (docs/agents.md). */
export function agentsCommand(): Command {
  return new Command('agents')
    .description('the agent gateway: agent integrations (remote A2A agents) and agent servers (one in a workspace)')
    .addCommand(agentIntegrationsCommand())
    .addCommand(agentServersCommand());
}
