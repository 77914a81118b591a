import { describe, expect, it, onTestFinished } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import type { Db } from '../../src/storage/database.js';
import { startGateway, type GatewayHarness } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';
import { startMockVault } from '../helpers/mock-vault.js';
import { chat } from '../helpers/tenant-pair.js';

const HOUR = 3_600_000;
const notices = (db: Db, kind: string) =>
  db.selectFrom('notifications').selectAll().where('kind', '=', kind).orderBy('created_at').execute();

/** A client that reads its svcgw key from the vault before each call, as a deployment reading the secret would. */
async function callWithKeyFromVault(g: GatewayHarness, key: string) {
  return apiClient(g.baseUrl).post('/v1/chat/completions', chat, { ...g.viaMock, 'x-service-api-key': key });
}

describe('API key rotation into a secret reference', () => {
  it('writes each scheduled rotation’s new key to the vault, keeps the old one for the transition, and nobody collects anything', async () => {
    const clock = createManualClock(Date.parse('2026-03-02T00:00:00Z'));
    const vault = await startMockVault();
    onTestFinished(() => vault.close());
    vault.addAppRole('svcgw-writer', 'writer-secret-id');
    const g = await startGateway({ clock });
    const ref = await g.admin.post('/v1/secret-references', {
      name: 'CI gateway key',
      slug: 'ci-key',
      manager_type: 'hashicorp_vault',
      auth_config: {
        vault_auth_type: 'approle',
        vault_addr: vault.url,
        vault_role_id: 'svcgw-writer',
        vault_secret_id: 'writer-secret-id',
      },
      secret_path: 'secret/ci/svcgw',
    });
    expect(ref.status, JSON.stringify(ref.body)).toBe(200);
    const created = await g.admin.post('/v1/api-keys/workspace/service', {
      name: 'ci',
      workspace_id: 'default',
      scopes: ['completions.write'],
      rotation_policy: {
        rotation_period: 'weekly',
        key_transition_period_ms: HOUR,
        secret_reference_id: 'ci-key',
        secret_key: 'api_key',
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.id as string;
    // The operator puts the first key there once; the other fields of the entry are left alone by rotations.
    vault.put('secret/ci/svcgw', { api_key: created.body.key, owner: 'ci-team' });
    const first = (vault.get('secret/ci/svcgw') as { api_key: string }).api_key;
    expect((await callWithKeyFromVault(g, first)).status).toBe(200);

    // 24 hours before: the notice says the key will be written to the vault, nothing to do.
    clock.set(Date.parse('2026-03-08T01:00:00Z'));
    await g.server.keyLifecycle.runOnce();
    const upcoming = await notices(g.server.db, 'api_key.rotation_upcoming');
    expect(upcoming).toHaveLength(1);
    expect(upcoming[0]!.body_text).toContain(`written to the secret reference ${ref.body.id}`);
    expect(upcoming[0]!.body_text).toContain('Nothing needs to be done');

    // Due: the new key is in the vault at once, and it works; the old one works until the transition ends.
    clock.set(Date.parse('2026-03-09T00:00:30Z'));
    await g.server.keyLifecycle.runOnce();
    const entry = vault.get('secret/ci/svcgw') as { api_key: string; owner: string };
    expect(entry.owner).toBe('ci-team');
    expect(entry.api_key).not.toBe(first);
    expect(entry.api_key).toMatch(/^svc/);
    expect((await callWithKeyFromVault(g, entry.api_key)).status).toBe(200);
    expect((await callWithKeyFromVault(g, first)).status).toBe(200);
    expect((await g.admin.get(`/v1/api-keys/${id}`)).body).toMatchObject({
      new_key_pending_since: null,
      key_transition_expires_at: '2026-03-09T01:00:30.000Z',
      rotation_policy: { next_rotation_at: '2026-03-16T00:00:00.000Z', secret_reference_id: ref.body.id },
    });
    await g.server.keyLifecycle.runOnce();
    const rotated = await notices(g.server.db, 'api_key.rotated');
    expect(rotated).toHaveLength(1);
    expect(rotated[0]!.body_text).toContain(
      `The new key was written to the secret reference ${ref.body.id} (key api_key)`,
    );
    clock.set(Date.parse('2026-03-09T01:00:30Z'));
    expect((await callWithKeyFromVault(g, first)).status).toBe(401);
    expect((await callWithKeyFromVault(g, entry.api_key)).status).toBe(200);

    // A write the vault refuses: nothing changes for the clients, the owners are told, and it is retried.
    vault.addAppRole('svcgw-writer', 'rotated-elsewhere');
    clock.set(Date.parse('2026-03-16T00:00:10Z'));
    await g.server.keyLifecycle.runOnce();
    await g.server.keyLifecycle.runOnce();
    expect((vault.get('secret/ci/svcgw') as { api_key: string }).api_key).toBe(entry.api_key);
    expect((await callWithKeyFromVault(g, entry.api_key)).status).toBe(200);
    expect((await g.admin.get(`/v1/api-keys/${id}`)).body.rotation_policy.next_rotation_at).toBe(
      '2026-03-16T00:00:00.000Z',
    );
    const failed = await notices(g.server.db, 'api_key.rotation_failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.subject).toBe('API key "ci" could not be rotated into its secret manager');
    expect(failed[0]!.body_text).toContain('invalid role or secret ID');
    expect(failed[0]!.body_text).toContain('The current key was not changed and keeps working');
    expect(g.logLines.some((line) => line.includes('could not write the new key to its secret reference'))).toBe(true);

    // Once the vault accepts the writer again, the next run rotates.
    vault.addAppRole('svcgw-writer', 'writer-secret-id');
    clock.advance(30_000);
    await g.server.keyLifecycle.runOnce();
    const third = (vault.get('secret/ci/svcgw') as { api_key: string }).api_key;
    expect(third).not.toBe(entry.api_key);
    expect((await callWithKeyFromVault(g, third)).status).toBe(200);
    expect((await g.admin.get(`/v1/api-keys/${id}`)).body.rotation_policy.next_rotation_at).toBe(
      '2026-03-23T00:00:00.000Z',
    );

    // A manual rotation writes there too, and also answers with the key.
    const manual = await g.admin.post(`/v1/api-keys/${id}/rotate`);
    expect(manual.status, JSON.stringify(manual.body)).toBe(200);
    expect((vault.get('secret/ci/svcgw') as { api_key: string }).api_key).toBe(manual.body.key);
    expect((await callWithKeyFromVault(g, manual.body.key)).status).toBe(200);

    // No key ever reaches a log line.
    const logs = g.logLines.join('\n');
    for (const key of [first, entry.api_key, third, manual.body.key]) expect(logs).not.toContain(key);
  });

  it('refuses a manual rotation with 502 when the vault refuses the write, and leaves the key as it was', async () => {
    const vault = await startMockVault();
    onTestFinished(() => vault.close());
    const g = await startGateway();
    await g.admin.post('/v1/secret-references', {
      name: 'Unwritable',
      slug: 'unwritable',
      manager_type: 'hashicorp_vault',
      auth_config: { vault_auth_type: 'token', vault_addr: vault.url, vault_token: 'hvs.not-a-token-vault-knows' },
      secret_path: 'secret/ci/key',
    });
    const created = await g.admin.post('/v1/api-keys/organisation/service', {
      name: 'manual',
      scopes: ['completions.write'],
      rotation_policy: { rotation_period: 'monthly', secret_reference_id: 'unwritable' },
    });
    const refused = await g.admin.post(`/v1/api-keys/${created.body.id}/rotate`);
    expect(refused.status).toBe(502);
    expect(refused.body.error).toMatchObject({ code: 'SECRET_MANAGER_ERROR' });
    expect(refused.body.error.message).toContain('permission denied');
    expect((await callWithKeyFromVault(g, created.body.key)).status).toBe(200);
    expect((await g.admin.get(`/v1/api-keys/${created.body.id}`)).body.key).toBe(
      `${created.body.key.slice(0, 8)}****${created.body.key.slice(-4)}`,
    );
  });
});
