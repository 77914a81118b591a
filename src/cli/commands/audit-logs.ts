import { Command, Option } from 'commander';
import type { Column } from '../output.js';
import { pastTime } from '../durations.js';
import { clientCommand, examples, integer, pagingOptions, printList, run, type Context } from './common.js';

interface AuditRecord {
  timestamp: string;
  action: string;
  resource_type: string;
  resource_id: string | null;
  method: string;
  uri: string;
  response_status_code: number;
  api_key_id: string | null;
}

interface AuditListOptions {
  since?: string;
  until?: string;
  userId?: string;
  apiKeyId?: string;
  workspaceId?: string;
  resourceType?: string;
  resourceId?: string;
  action?: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  uri?: string;
  requestId?: string;
  userType?: string;
  status?: number;
  clientIp?: string;
  country?: string;
}

const COLUMNS: Column<AuditRecord>[] = [
  { header: 'time', value: (r) => r.timestamp },
  { header: 'action', value: (r) => r.action },
  { header: 'resource', value: (r) => r.resource_type },
  { header: 'resource id', value: (r) => r.resource_id },
  {
    header: 'status',
    value: (r) => r.response_status_code,
    colour: (r) => (r.response_status_code >= 400 ? 'yellow' : 'green'),
  },
  { header: 'request', value: (r) => `${r.method} ${r.uri}` },
  { header: 'api key', value: (r) => r.api_key_id },
];

export function auditLogsCommand(): Command {
  const group = new Command('audit-logs').description('the audit log of administrative actions (admin keys)');
  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list audit records, newest first'), 100)
        .option('--since <time>', 'from this time: ISO 8601, or a duration ago (1h, 7d)', pastTime)
        .option('--until <time>', 'up to this time: ISO 8601, or a duration ago (30m)', pastTime)
        .option('--user-id <uuid>', 'only actions of this user')
        .option('--api-key-id <uuid>', 'only actions made with this key')
        .option('--workspace-id <uuid>', 'only this workspace')
        .option('--resource-type <type>', 'only this resource type (api_key, workspace, rate_limits_policy, …)')
        .option('--resource-id <id>', 'only this resource')
        .option('--action <action>', 'only this action (create, update, delete, …)')
        .addOption(
          new Option('--method <method>', 'only this HTTP method').choices(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
        )
        .option('--uri <path>', 'only requests to this path, exactly, without its query string (/v1/api-keys)')
        .option('--request-id <id>', 'only the record of this request (its x-request-id)')
        .addOption(
          new Option('--user-type <type>', 'only this kind of actor (user: a person, with SSO or a JWT)').choices([
            'user',
            'api_key',
            'jwt',
            'session',
            'system',
          ]),
        )
        .option('--status <code>', 'only this response status code (403)', integer(100, 599))
        .option('--client-ip <ip>', 'only requests from this client address')
        .option('--country <code>', 'only requests whose proxy named this country (DE)')
        .action(
          run(async (ctx: Context<AuditListOptions>) => {
            const o = ctx.opts;
            const query = {
              start_time: o.since,
              end_time: o.until,
              user_id: o.userId,
              api_key_id: o.apiKeyId,
              workspace_id: o.workspaceId,
              resource_type: o.resourceType,
              resource_id: o.resourceId,
              action: o.action,
              method: o.method,
              uri: o.uri,
              request_id: o.requestId,
              user_type: o.userType,
              response_status_code: o.status,
              client_ip: o.clientIp,
              country: o.country,
            };
            await printList<AuditRecord>(ctx, '/v1/audit-logs', query, COLUMNS);
          }),
        ),
      [
        'svcgw audit-logs list --resource-type api_key --action delete',
        'svcgw audit-logs list --since 2026-01-01T00:00:00Z --all --json',
        'svcgw audit-logs list --resource-type jwt --method GET --json',
        'svcgw audit-logs list --user-type user --status 403 --country DE',
        'svcgw audit-logs list --uri /v1/api-keys --method POST',
      ],
    ),
  );
  return group;
}
