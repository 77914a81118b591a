import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { generateScimToken, hashScimToken } from '../../src/auth/scim-tokens.js';
import type { Db } from '../../src/storage/database.js';
import type { ApiClient, JsonResponse } from './http.js';

export const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

/** Creates a SCIM token through the admin API, as an organisation owner does. */
export async function createScimToken(
  admin: ApiClient,
  name = 'identity provider',
): Promise<{ id: string; token: string }> {
  const res = await admin.post('/v1/scim/tokens', { name });
  if (res.status !== 200) throw new Error(`SCIM token create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id, token: res.body.token };
}

/** A SCIM token written straight to the database: for servers whose token routes are turned off. */
export async function insertScimToken(db: Db, organisationId: string): Promise<string> {
  const token = generateScimToken();
  const now = new Date().toISOString();
  await db
    .insertInto('scim_tokens')
    .values({
      id: randomUUID(),
      organisation_id: organisationId,
      name: 'made before the flag was turned off',
      token_hash: hashScimToken(token),
      token_hint: 'scim-…',
      status: 'active',
      expires_at: null,
      created_by_user_id: null,
      created_by_key_id: null,
      created_at: now,
      last_updated_at: now,
      revoked_at: null,
    })
    .execute();
  return token;
}

/**
 * A SCIM client as identity providers are: `Authorization: Bearer <token>`, bodies as
 * application/scim+json (or whatever content type `contentType` says), paths under /v1/scim/v2.
 */
export function scimClient(baseUrl: string, token: string | null, contentType = 'application/scim+json') {
  async function call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<JsonResponse<T>> {
    const init: RequestInit = {
      method,
      headers: { accept: 'application/scim+json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= contentType;
    }
    const response = await fetch(`${baseUrl}/v1/scim/v2${path}`, init);
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body: parsed as T };
  }
  return {
    get: <T = any>(path: string, headers?: Record<string, string>) => call<T>('GET', path, undefined, headers),
    post: <T = any>(path: string, body: unknown, headers?: Record<string, string>) =>
      call<T>('POST', path, body, headers),
    put: <T = any>(path: string, body: unknown, headers?: Record<string, string>) =>
      call<T>('PUT', path, body, headers),
    patch: <T = any>(path: string, body: unknown, headers?: Record<string, string>) =>
      call<T>('PATCH', path, body, headers),
    delete: <T = any>(path: string, headers?: Record<string, string>) => call<T>('DELETE', path, undefined, headers),
    call,
  };
}

export type ScimClient = ReturnType<typeof scimClient>;

/** `filter=<expression>` as a query string, encoded as providers encode it. */
export const filterQuery = (expression: string, extra = '') =>
  `?filter=${encodeURIComponent(expression)}${extra ? `&${extra}` : ''}`;

/** A PatchOp body. */
export const patchOp = (...operations: Array<Record<string, unknown>>) => ({
  schemas: [PATCH_OP],
  Operations: operations,
});

/** Asserts a SCIM error answer: the status, the error schema with status as a string, the SCIM content type. */
export function expectScimError(res: JsonResponse, status: number, scimType?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/scim\+json/);
  expect(res.body.schemas).toEqual([SCIM_ERROR]);
  expect(res.body.status).toBe(String(status));
  expect(typeof res.body.detail).toBe('string');
  if (scimType !== undefined) expect(res.body.scimType).toBe(scimType);
}
