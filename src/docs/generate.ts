import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../config/load-config.js';
import { envName, flagName, settingsSchema } from '../config/schema.js';
import { ERROR_CODES } from '../lib/errors.js';
import { systemClock } from '../lib/clock.js';
import { buildApp } from '../server/build-app.js';
import type { RouteAccess } from '../server/route-config.js';
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
    const openapi = `${JSON.stringify(app.swagger(), null, 2)}\n`;
    await app.close();
    return { 'openapi.json': openapi, 'route-access.md': routeAccessTable(routes), 'error-codes.md': errorCodesTable(), 'settings-reference.md': settingsTable() };
  } finally {
    await db.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function routeAccessTable(routes: RouteAccess[]): string {
  const rows = [...routes]
    .sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method))
    .map(({ method, url, auth }) => {
      if ('public' in auth) return `| ${method} | \`${url}\` | none (public) | anyone |`;
      const scope = auth.scope === null ? 'any valid key' : typeof auth.scope === 'string' ? `\`${auth.scope}\`` : Object.entries(auth.scope).map(([kind, s]) => `${kind}: \`${s}\``).join('<br>');
      return `| ${method} | \`${url}\` | ${scope} | ${auth.keyTypes.join(', ')} |`;
    });
  return [
    '# Route access',
    '',
    'Generated from the route declarations by `npm run docs`; do not edit. Every route declares the',
    'scope and key types it accepts; the server refuses to start a route that declares none.',
    'Services then apply the finer rules (workspace of the key, role of its user), described in',
    '[authentication.md](authentication.md).',
    '',
    '| Method | Path | Scope | Key types |',
    '|---|---|---|---|',
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
