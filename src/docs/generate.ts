import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../config/load-config.js';
import { SCOPES } from '../auth/scopes.js';
import { grantedScopes } from '../auth/jwt/claims.js';
import { envName, flagName, settingsSchema } from '../config/schema.js';
import { featureVariable } from '../features/flags.js';
import { ERROR_CODES } from '../lib/errors.js';
import { systemClock } from '../lib/clock.js';
import { buildApp } from '../server/build-app.js';
import type { RouteAccess, RouteAuth, RouteRoles } from '../http/route-config.js';
import { migrateToLatest, openSqlite } from '../storage/database.js';

/**
 * The documents generated from the code itself (OpenAPI, route access table, error codes), so
 * that docs/ cannot drift from what the server does. `npm run docs` writes them; a test checks
 * that the committed copies are current.
 */
export async function generateDocs(): Promise<Record<string, string>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcgw-docs-'));
  const db = openSqlite(dataDir);
  try {
    await migrateToLatest(db);
    const config = loadConfig({ flags: { data_dir: dataDir, port: 0 }, env: {} });
    const { app, routes } = await buildApp({ config, db, logger: pino({ level: 'silent' }), clock: systemClock });
    const openapi = `${JSON.stringify(await app.openApiDocument(), null, 2)}\n`;
    await app.close();
    return {
      'openapi.json': openapi,
      'route-access.md': routeAccessTable(routes),
      'scopes.md': scopesTable(routes),
      'error-codes.md': errorCodesTable(),
      'settings-reference.md': settingsTable(),
    };
  } finally {
    await db.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const scopeCell = (auth: Exclude<RouteAuth, { public: true } | { scim: true }>): string =>
  auth.scope === null ? 'any valid key' : typeof auth.scope === 'string' ? `\`${auth.scope}\`` : Object.entries(auth.scope).map(([kind, s]) => `${kind}: \`${s}\``).join('<br>');

const rolesCell = (roles: RouteRoles | undefined): string =>
  roles === undefined ? 'any' : Array.isArray(roles) ? `org: ${(roles as readonly string[]).join(', ')}` : `workspace: ${(roles as { workspace: readonly string[] }).workspace.join(', ')}`;

/** The routes table of docs/route-access.md: who may call each route, as the auth hook enforces it. */
export function routeAccessTable(routes: readonly RouteAccess[]): string {
  const rows = [...routes]
    .sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method))
    .map(({ method, url, auth, features }) => {
      const flags = features.length === 0 ? '' : features.map((f) => `\`${featureVariable(f)}\``).join(', ');
      if ('public' in auth) return `| ${method} | \`${url}\` | none (public) | anyone | anyone | ${flags} |`;
      if ('scim' in auth) return `| ${method} | \`${url}\` | — | SCIM token (no API key) | — | ${flags} |`;
      return `| ${method} | \`${url}\` | ${scopeCell(auth)} | ${auth.keyTypes.join(', ')} | ${rolesCell(auth.roles)} | ${flags} |`;
    });
  return [
    '# Route access',
    '',
    'Generated from the route declarations by `npm run docs`; do not edit. Every route declares the',
    'scope and key types it accepts; the server refuses to start a route that declares none.',
    '',
    'The auth hook enforces every column, in this order: the key (401), the feature flags (403',
    '`FEATURE_DISABLED` while one is `OFF`), the key type, the scope, then the roles of the',
    "key's user (403 `ROLE_NOT_ALLOWED`). **Roles**: `org: …` are organisation roles; `workspace: …`",
    "is the user's role in the key's workspace, where organisation owners and admins count as",
    'workspace admins; `any` means the route itself does not restrict roles. Services then apply',
    'the rules that depend on the resource (the workspace a key reaches, a member managing their',
    'own key, never granting a role above your own), described in',
    '[authentication.md](authentication.md). **Feature flags**: see [feature-flags.md](feature-flags.md).',
    'The SCIM protocol routes (`/v1/scim/v2/…`) take a SCIM token (`Authorization: Bearer`) instead of',
    'an API key, and no API key: see [scim.md](scim.md).',
    '',
    '| Method | Path | Scope | Key types | Roles | Feature flags |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

/** docs/scopes.md: the scope catalogue, which keys may carry each scope, and the routes that need it. */
export function scopesTable(routes: readonly RouteAccess[]): string {
  const usedBy = new Map<string, string[]>();
  for (const { method, url, auth } of routes) {
    if ('public' in auth || 'scim' in auth || auth.scope === null) continue;
    const scopes = typeof auth.scope === 'string' ? [auth.scope] : [...new Set(Object.values(auth.scope))];
    for (const scope of scopes) usedBy.set(scope, [...(usedBy.get(scope) ?? []), `${method} \`${url}\``]);
  }
  const rows = SCOPES.map((scope) => {
    const uses = (usedBy.get(scope.name) ?? []).sort();
    const jwt = grantedScopes([scope.name]).size > 0 ? 'yes' : 'no';
    return `| \`${scope.name}\` | ${scope.description} | yes | ${scope.workspace ? 'yes' : 'no'} | ${jwt} | ${uses.length === 0 ? '—' : uses.join('<br>')} |`;
  });
  return [
    '# Scopes',
    '',
    'Generated from `src/auth/scopes.ts` and the route declarations by `npm run docs`; do not edit.',
    'An API key carries a list of scopes, given when it is created (`GET /v1/api-keys/scopes` lists',
    'them too). Admin (organisation) keys may carry every scope; workspace keys only the scopes',
    'marked for them. A key can only grant scopes it holds itself. Which route needs which scope,',
    'with key types and roles: [route-access.md](route-access.md). JWTs ([jwt.md](jwt.md)) use the',
    'scopes of their token that the JWTs column marks; they drop the others.',
    '',
    '| Scope | Meaning | Admin keys | Workspace keys | JWTs | Routes |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

function errorCodesTable(): string {
  const rows = Object.entries(ERROR_CODES).map(([code, info]) => `| \`${code}\` | ${info.status} | \`${info.type}\` | ${info.summary} |`);
  return [
    '# Error codes',
    '',
    'Generated from `src/lib/errors.ts` by `npm run docs`; do not edit. Every error, on every route,',
    'has the body `{"error": {"message", "type", "param", "code"}}` and an `x-request-id` header.',
    '`code` is stable; `param` names the offending parameter when there is one.',
    '',
    '| Code | Status | Type | Meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

/** Flags exist for the settings an operator changes per run; the rest come from env or the file. */
const FLAG_SETTINGS = new Set(['host', 'port', 'data_dir', 'log_level']);

function settingsTable(): string {
  const defaults = settingsSchema.parse({}) as Record<string, unknown>;
  const rows = Object.entries(settingsSchema.shape).map(([name, schema]) => {
    const fallback = defaults[name] === undefined ? 'unset' : `\`${JSON.stringify(defaults[name])}\``;
    const flag = FLAG_SETTINGS.has(name) ? `\`${flagName(name)}\`` : '';
    return `| \`${name}\` | ${flag} | \`${envName(name)}\` | ${fallback} | ${schema.description ?? ''} |`;
  });
  return [
    '# Settings reference',
    '',
    'Generated from `src/config/schema.ts` by `npm run docs`; do not edit. Precedence and examples:',
    '[settings.md](settings.md).',
    '',
    '| Setting (file key) | Flag | Environment | Default | Meaning |',
    '|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}
