import { Command, CommanderError } from 'commander';
import { VERSION } from '../lib/version.js';
import { adminCommand } from './commands/admin.js';
import { analyticsCommand } from './commands/analytics.js';
import { applyCommand } from './commands/apply.js';
import { auditLogsCommand } from './commands/audit-logs.js';
import { groupExamples } from './commands/common.js';
import { initCommand } from './commands/init.js';
import { integrationsCommand } from './commands/integrations.js';
import { aliasesCommand } from './commands/models.js';
import { invitesCommand } from './commands/invites.js';
import { keysCommand } from './commands/keys.js';
import { loginCommand, logoutCommand } from './commands/login.js';
import { logsCommand } from './commands/logs.js';
import { mcpCommand } from './commands/mcp-servers.js';
import { membersCommand } from './commands/members.js';
import { policiesCommand } from './commands/policies.js';
import { providersCommand } from './commands/providers.js';
import { serveCommand } from './commands/serve.js';
import { sessionsCommand } from './commands/sessions.js';
import { usersCommand } from './commands/users.js';
import { virtualKeysCommand } from './commands/virtual-keys.js';
import { dbCommand } from './commands/db.js';
import { configsCommand } from './commands/configs.js';
import { deploymentsCommand } from './commands/deployments.js';
import { guardrailsCommand } from './commands/guardrails.js';
import { promptsCommand } from './commands/prompts.js';
import { agentsCommand } from './commands/agents.js';
import { feedbackCommand } from './commands/feedback.js';
import { jwtCommand } from './commands/jwt.js';
import { scimCommand } from './commands/scim.js';
import { secretReferencesCommand } from './commands/secret-references.js';
import { workspacesCommand } from './commands/workspaces.js';
import { FatalError } from './fatal-error.js';
import { endQuietlyWhenPipeCloses } from './output.js';

/** Every command, however deep, reports usage errors by throwing (exit 2) instead of exiting. */
function configureTree(command: Command, root = true): void {
  command.exitOverride().showHelpAfterError('(add --help for usage)');
  for (const sub of command.commands) configureTree(sub, false);
  if (!root && command.commands.length > 0) groupExamples(command);
}

export function buildProgram(): Command {
  const program = new Command('svcgw')
    .description('Self-hosted AI gateway: serve it, and administer it.')
    .version(VERSION, '-V, --version')
    .addHelpText(
      'after',
      "\nThe admin commands connect with --base-url / SVCGW_BASE_URL and --api-key / SVCGW_API_KEY,\nor a profile saved by svcgw login. --json prints JSON for scripts. Exit codes: 0 success,\n1 server or network error (the server's message on stderr), 2 usage error.",
    );
  program.addCommand(serveCommand());
  program.addCommand(initCommand());
  program.addCommand(adminCommand());
  program.addCommand(dbCommand());
  program.addCommand(loginCommand());
  program.addCommand(logoutCommand());
  program.addCommand(applyCommand());
  program.addCommand(keysCommand());
  program.addCommand(workspacesCommand());
  program.addCommand(membersCommand());
  program.addCommand(usersCommand());
  program.addCommand(jwtCommand());
  program.addCommand(scimCommand());
  program.addCommand(sessionsCommand());
  program.addCommand(invitesCommand());
  program.addCommand(integrationsCommand());
  program.addCommand(providersCommand());
  program.addCommand(virtualKeysCommand());
  program.addCommand(secretReferencesCommand());
  program.addCommand(configsCommand());
  program.addCommand(deploymentsCommand());
  program.addCommand(guardrailsCommand());
  program.addCommand(promptsCommand());
  program.addCommand(mcpCommand());
  program.addCommand(agentsCommand());
  program.addCommand(aliasesCommand());
  program.addCommand(policiesCommand());
  program.addCommand(logsCommand());
  program.addCommand(feedbackCommand());
  program.addCommand(auditLogsCommand());
  program.addCommand(analyticsCommand());
  configureTree(program);
  return program;
}

/** Entry point: exit 0 on success, 1 on a runtime or server error, 2 on a usage error. */
export async function main(argv: string[]): Promise<void> {
  endQuietlyWhenPipeCloses(process.stdout);
  endQuietlyWhenPipeCloses(process.stderr);
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode === 0 ? 0 : 2;
      return;
    }
    if (error instanceof FatalError) {
      process.stderr.write(`svcgw: ${error.message}\n`);
      process.exitCode = error.exitCode;
      return;
    }
    process.stderr.write(`svcgw: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  }
}
