/**
 * How much choosing a config and a target costs per request: a stored config looked up by
 * slug (cached by version), an inline config (cached by its text), and the router walking a
 * nested fallback → loadbalance → conditional tree, with the provider call stubbed out.
 * Prints microseconds per request; figures go to docs/benchmarks.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Principal } from '../src/auth/principal.js';
import { bootstrap } from '../src/bootstrap/bootstrap.js';
import { systemClock } from '../src/lib/clock.js';
import { newId } from '../src/lib/ids.js';
import { createConfigSelector } from '../src/gateway/routing/config-selector.js';
import { route } from '../src/gateway/routing/router.js';
import { migrateToLatest, openSqlite } from '../src/storage/database.js';
import { createConfigRepository } from '../src/storage/repositories/configs.js';

const tree = {
  strategy: { mode: 'fallback' },
  override_params: { temperature: 0.2 },
  retry: { attempts: 2 },
  targets: [
    {
      strategy: {
        mode: 'conditional',
        conditions: [
          { query: { 'metadata.tier': { $eq: 'pro' } }, then: 'pro' },
          { query: { 'params.model': { $in: ['gpt-4o', 'o3'] } }, then: 'big' },
        ],
        default: 'lb',
      },
      targets: [
        { name: 'pro', provider: 'openai', custom_host: 'http://127.0.0.1:1' },
        { name: 'big', provider: 'openai', custom_host: 'http://127.0.0.1:2' },
        {
          name: 'lb',
          strategy: { mode: 'loadbalance' },
          targets: [
            { provider: 'openai', custom_host: 'http://127.0.0.1:3', weight: 3 },
            { provider: 'groq', custom_host: 'http://127.0.0.1:4', weight: 1 },
          ],
        },
      ],
    },
    { provider: 'openai', custom_host: 'http://127.0.0.1:5' },
  ],
};

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svcgw-bench-routing-'));
  const db = openSqlite(dir);
  try {
    await migrateToLatest(db);
    const boot = await bootstrap(db, { clock: systemClock, ownerEmail: 'owner@bench.local' });
    const configs = createConfigRepository(db);
    const stamp = new Date().toISOString();
    const id = newId();
    const versionId = newId();
    await configs.insert(
      {
        id,
        organisation_id: boot.organisationId,
        workspace_id: boot.workspaceId,
        slug: 'bench',
        name: 'bench',
        status: 'active',
        latest_version_id: versionId,
        created_at: stamp,
        last_updated_at: stamp,
      },
      {
        id: versionId,
        config_id: id,
        version: 1,
        config: JSON.stringify(tree),
        created_at: stamp,
        created_by_key_id: null,
      },
    );
    const selector = createConfigSelector({ configs, clock: systemClock });
    const principal = {
      organisationId: boot.organisationId,
      workspaceId: null,
      defaults: null,
    } as unknown as Principal;
    const inline = JSON.stringify(tree);
    const facts = { metadata: { tier: 'free' }, params: { model: 'gpt-4o-mini', messages: [] } };
    const hooks = {
      attempt: async () => ({ ok: true as const, status: 200, response: null, retryAfterMs: null, provider: 'openai' }),
      discard: () => undefined,
      sleep: async () => undefined,
      random: Math.random,
      cancelled: () => false,
    };

    const measure = async (label: string, once: () => unknown) => {
      for (let i = 0; i < 2_000; i++) await once(); // warm-up
      const n = 100_000;
      const started = performance.now();
      for (let i = 0; i < n; i++) await once();
      const us = ((performance.now() - started) * 1000) / n;
      console.log(`${label.padEnd(58)} ${us.toFixed(2)} µs/request`);
    };
    await measure('select stored config by slug (cached by version)', () =>
      selector.select('bench', principal, boot.workspaceId),
    );
    await measure('select inline config (cached by its text)', () =>
      selector.select(inline, principal, boot.workspaceId),
    );
    const parsed = (await selector.select('bench', principal, boot.workspaceId))!.config;
    await measure('route: fallback → conditional → loadbalance, one attempt', () => route(parsed, facts, hooks));
    await measure('select + route together', async () =>
      route((await selector.select('bench', principal, boot.workspaceId))!.config, facts, hooks),
    );
  } finally {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
