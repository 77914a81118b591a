import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { chat, expectRefused, startTenantPair } from '../helpers/tenant-pair.js';

const RATE = '/v1/policies/rate-limits';
const USAGE = '/v1/policies/usage-limits';
const UNKNOWN_KEY = '00000000-0000-4000-8000-000000000001';

const ratePolicy = (conditions: Array<{ key: string; value: string }>, extra: Record<string, unknown> = {}) => ({
  conditions,
  group_by: [{ key: 'api_key' }],
  type: 'requests',
  unit: 'rpm',
  value: 0,
  ...extra,
});
const usagePolicy = (conditions: Array<{ key: string; value: string }>, extra: Record<string, unknown> = {}) => ({
  conditions,
  group_by: [{ key: 'api_key' }],
  type: 'cost',
  credit_limit: 0.0001,
  ...extra,
});

describe('tenant walls: policies made with a workspace key', () => {
  it('refuses rate-limits conditions naming another workspace, its keys, an unknown key or the organisation, and B keeps its traffic', async () => {
    const { g, organisationId, a, b } = await startTenantPair();
    const endpoint = { key: 'endpoint_type', value: 'chatComplete' };
    const adminKey = await g.server.db
      .selectFrom('api_keys')
      .select('id')
      .where('type', '=', 'organisation-service')
      .executeTakeFirstOrThrow();
    const refusals: Array<[Array<{ key: string; value: string }>, string]> = [
      [[{ key: 'workspace_id', value: 'team-b' }], 'conditions[0].value'],
      [[endpoint, { key: 'workspace_id', value: b.id }], 'conditions[1].value'],
      [[endpoint, { key: 'api_key', value: b.keyId }], 'conditions[1].value'],
      [[{ key: 'api_key', value: UNKNOWN_KEY }], 'conditions[0].value'],
      [[{ key: 'api_key', value: adminKey.id }], 'conditions[0].value'],
      [[{ key: 'organisation_id', value: organisationId }], 'conditions[0].key'],
    ];
    for (const [conditions, param] of refusals) {
      expectRefused(await a.client.post(RATE, ratePolicy(conditions)), 403, 'WORKSPACE_FORBIDDEN', param);
    }
    expect((await g.admin.get(`${RATE}?workspace_id=team-a`)).body.total).toBe(0);
    expect((await b.client.post('/v1/chat/completions', chat, g.viaMock)).status).toBe(200);
    expect(g.mock.requests).toHaveLength(1);
  });

  it('confines a policy without a workspace condition (even grouped by organisation_id) to its own workspace', async () => {
    const { g, a, b } = await startTenantPair();
    const created = await a.client.post(
      RATE,
      ratePolicy([{ key: 'endpoint_type', value: 'chatComplete' }], { group_by: [{ key: 'organisation_id' }] }),
    );
    expect(created.status).toBe(200);
    // The bound is stored where everyone can see it: the policy's own workspace, by id.
    const stored = await a.client.get(`${RATE}/${created.body.id}`);
    expect(stored.body).toMatchObject({
      workspace_id: a.id,
      conditions: [
        { key: 'endpoint_type', value: 'chatComplete' },
        { key: 'workspace_id', value: a.id },
      ],
    });

    expectRefused(await a.client.post('/v1/chat/completions', chat, g.viaMock), 429, 'RATE_LIMITED');
    expect((await b.client.post('/v1/chat/completions', chat, g.viaMock)).status).toBe(200);
    expect((await b.client.post('/v1/chat/completions', chat, g.viaMock)).status).toBe(200);
    expect(g.mock.requests).toHaveLength(2);

    // A workspace condition given by slug is kept as the id (a slug can change hands).
    const bySlug = await a.client.post(
      RATE,
      ratePolicy(
        [
          { key: 'workspace_id', value: 'team-a' },
          { key: 'api_key', value: a.keyId },
        ],
        { value: 5 },
      ),
    );
    expect((await a.client.get(`${RATE}/${bySlug.body.id}`)).body.conditions).toEqual([
      { key: 'workspace_id', value: a.id },
      { key: 'api_key', value: a.keyId },
    ]);
  });

  it('applies the same rule to updates (PUT): conditions are checked and confined again', async () => {
    const { g, a, b } = await startTenantPair();
    const { id } = (await a.client.post(RATE, ratePolicy([{ key: 'workspace_id', value: 'team-a' }], { value: 100 })))
      .body;
    expectRefused(
      await a.client.put(`${RATE}/${id}`, { conditions: [{ key: 'workspace_id', value: 'team-b' }] }),
      403,
      'WORKSPACE_FORBIDDEN',
      'conditions[0].value',
    );
    expectRefused(
      await a.client.put(`${RATE}/${id}`, {
        conditions: [
          { key: 'endpoint_type', value: 'chatComplete' },
          { key: 'api_key', value: b.keyId },
        ],
      }),
      403,
      'WORKSPACE_FORBIDDEN',
      'conditions[1].value',
    );
    expectRefused(
      await a.client.put(`${RATE}/${id}`, {
        conditions: [{ key: 'organisation_id', value: g.server.bootstrap.organisationId }],
      }),
      403,
      'WORKSPACE_FORBIDDEN',
      'conditions[0].key',
    );
    expect((await a.client.get(`${RATE}/${id}`)).body.conditions).toEqual([{ key: 'workspace_id', value: a.id }]);

    // Dropping the workspace condition does not make it organisation-wide.
    expect(
      (await a.client.put(`${RATE}/${id}`, { conditions: [{ key: 'endpoint_type', value: 'chatComplete' }], value: 0 }))
        .status,
    ).toBe(200);
    expect((await a.client.get(`${RATE}/${id}`)).body.conditions).toEqual([
      { key: 'endpoint_type', value: 'chatComplete' },
      { key: 'workspace_id', value: a.id },
    ]);
    expectRefused(await a.client.post('/v1/chat/completions', chat, g.viaMock), 429, 'RATE_LIMITED');
    expect((await b.client.post('/v1/chat/completions', chat, g.viaMock)).status).toBe(200);
  });

  it('lets an admin key make an organisation-wide policy that applies to both workspaces; a workspace key cannot change it', async () => {
    const { g, a, b } = await startTenantPair();
    // Filed in team-a, but organisation-wide: one bucket for the whole organisation.
    const created = await g.admin.post(
      RATE,
      ratePolicy([{ key: 'organisation_id', value: g.server.bootstrap.organisationId }], {
        workspace_id: 'team-a',
        group_by: [{ key: 'organisation_id' }],
        value: 1,
      }),
    );
    expect(created.status).toBe(200);
    expect((await a.client.post('/v1/chat/completions', chat, g.viaMock)).status).toBe(200);
    expectRefused(await b.client.post('/v1/chat/completions', chat, g.viaMock), 429, 'RATE_LIMITED');

    // team-a can read it (it is filed there) but not lift it for everyone.
    expect((await a.client.get(`${RATE}/${created.body.id}`)).status).toBe(200);
    expectRefused(await a.client.put(`${RATE}/${created.body.id}`, { value: 1000 }), 403, 'WORKSPACE_FORBIDDEN');
    expectRefused(await a.client.delete(`${RATE}/${created.body.id}`), 403, 'WORKSPACE_FORBIDDEN');
    expect((await g.admin.get(`${RATE}/${created.body.id}`)).body).toMatchObject({ status: 'active', value: 1 });
    expect((await g.admin.put(`${RATE}/${created.body.id}`, { value: 1000 })).status).toBe(200);
  });
});

describe('tenant walls: usage-limits policies made with a workspace key', () => {
  it('refuses conditions naming another workspace, its keys or the organisation, on create and update', async () => {
    const { organisationId, a, b } = await startTenantPair();
    expectRefused(
      await a.client.post(USAGE, usagePolicy([{ key: 'workspace_id', value: 'team-b' }])),
      403,
      'WORKSPACE_FORBIDDEN',
      'conditions[0].value',
    );
    expectRefused(
      await a.client.post(
        USAGE,
        usagePolicy([
          { key: 'metadata.team', value: 'x' },
          { key: 'api_key', value: b.keyId },
        ]),
      ),
      403,
      'WORKSPACE_FORBIDDEN',
      'conditions[1].value',
    );
    expectRefused(
      await a.client.post(USAGE, usagePolicy([{ key: 'api_key', value: 'not-a-key' }])),
      403,
      'WORKSPACE_FORBIDDEN',
      'conditions[0].value',
    );
    expectRefused(
      await a.client.post(USAGE, usagePolicy([{ key: 'organisation_id', value: organisationId }])),
      403,
      'WORKSPACE_FORBIDDEN',
      'conditions[0].key',
    );
    const { id } = (await a.client.post(USAGE, usagePolicy([{ key: 'api_key', value: a.keyId }]))).body;
    expectRefused(
      await a.client.put(`${USAGE}/${id}`, { conditions: [{ key: 'api_key', value: b.keyId }] }),
      403,
      'WORKSPACE_FORBIDDEN',
      'conditions[0].value',
    );
    expect((await a.client.get(`${USAGE}/${id}`)).body.conditions).toEqual([
      { key: 'api_key', value: a.keyId },
      { key: 'workspace_id', value: a.id },
    ]);
  });

  it("spends only A's traffic against A's budget: B's requests still pass (no 402)", async () => {
    const { g, a, b } = await startTenantPair();
    // gpt-4o: 70 µUSD a request; 100 µUSD holds one.
    const created = await a.client.post(
      USAGE,
      usagePolicy([{ key: 'endpoint_type', value: 'chatComplete' }], { group_by: [{ key: 'organisation_id' }] }),
    );
    expect(created.status).toBe(200);
    expect((await a.client.post('/v1/chat/completions', chat, g.viaMock)).status).toBe(200);
    expectRefused(await a.client.post('/v1/chat/completions', chat, g.viaMock), 402, 'USAGE_LIMIT_EXCEEDED');
    for (let i = 0; i < 3; i++) expect((await b.client.post('/v1/chat/completions', chat, g.viaMock)).status).toBe(200);
    expect(g.mock.requests).toHaveLength(4);
    // Its entities are A's own.
    const entities = await a.client.get(`${USAGE}/${created.body.id}/entities`);
    expect(entities.status).toBe(200);
    expect(entities.body.data.map((e: { entity_id: string | null }) => e.entity_id)).not.toContain(b.keyId);
  });

  it("an admin's organisation-wide budget covers both workspaces; the workspace it is filed in can neither change it nor see other workspaces' usage", async () => {
    const { g, a, b } = await startTenantPair();
    const created = await g.admin.post(
      USAGE,
      usagePolicy([{ key: 'endpoint_type', value: 'chatComplete' }], { workspace_id: 'team-a', credit_limit: 1 }),
    );
    expect(created.status).toBe(200);
    const id = created.body.id;
    expect((await a.client.post('/v1/chat/completions', chat, g.viaMock)).status).toBe(200);
    expect((await b.client.post('/v1/chat/completions', chat, g.viaMock)).status).toBe(200);
    // Settled usage is written in batches: wait until both buckets show.
    let seen: string[] = [];
    for (let i = 0; i < 100 && seen.length < 2; i++) {
      seen = (await g.admin.get(`${USAGE}/${id}/entities`)).body.data.map((e: { entity_id: string }) => e.entity_id);
      if (seen.length < 2) await sleep(20);
    }
    expect(seen.sort()).toEqual([a.keyId, b.keyId].sort());

    expectRefused(await a.client.get(`${USAGE}/${id}/entities`), 403, 'WORKSPACE_FORBIDDEN');
    expectRefused(await a.client.put(`${USAGE}/${id}/entities/${b.keyId}/reset`), 403, 'WORKSPACE_FORBIDDEN');
    expectRefused(await a.client.put(`${USAGE}/${id}`, { credit_limit: 0.00001 }), 403, 'WORKSPACE_FORBIDDEN');
    expectRefused(await a.client.delete(`${USAGE}/${id}`), 403, 'WORKSPACE_FORBIDDEN');
    expect((await g.admin.get(`${USAGE}/${id}`)).body).toMatchObject({ status: 'active', credit_limit: 1 });
    expect((await b.client.post('/v1/chat/completions', chat, g.viaMock)).status).toBe(200);
  });
});
