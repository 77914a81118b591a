import type { Command } from 'commander';
import { adminCommand } from './commands/admin.js';
import { analyticsCommand } from './commands/analytics.js';
import { applyCommand } from './commands/apply.js';
import { auditLogsCommand } from './commands/audit-logs.js';
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
import { assembleProgram } from './assemble-program.js';

/** The whole `svcgw` program: every command, in the order its help lists them. */
export function buildProgram(): Command {
  return assembleProgram([
    serveCommand(),
    initCommand(),
    adminCommand(),
    dbCommand(),
    loginCommand(),
    logoutCommand(),
    applyCommand(),
    keysCommand(),
    workspacesCommand(),
    membersCommand(),
    usersCommand(),
    jwtCommand(),
    scimCommand(),
    sessionsCommand(),
    invitesCommand(),
    integrationsCommand(),
    providersCommand(),
    virtualKeysCommand(),
    secretReferencesCommand(),
    configsCommand(),
    deploymentsCommand(),
    guardrailsCommand(),
    promptsCommand(),
    mcpCommand(),
    agentsCommand(),
    aliasesCommand(),
    policiesCommand(),
    logsCommand(),
    feedbackCommand(),
    auditLogsCommand(),
    analyticsCommand(),
  ]);
}
