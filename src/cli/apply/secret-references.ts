import { z } from 'zod';
import { AUTH_SECRET_FIELDS } from '../../secrets/auth-config.js';
import { changedFields, maskSecret, same } from './compare.js';
import type { Resource, Step } from './plan-types.js';

/**
 * The `secret_references` section of an apply file: references known by slug, their workspaces
 * by slug. The `auth_config` secrets are written as `${VARIABLE}` and taken from the environment;
 * they are compared by their masks, as the server shows them.
 */
export const secretReferenceEntry = z
  .object({
    slug: z
      .string()
      .max(255)
      .regex(/^[a-zA-Z0-9_-]+$/, 'a secret reference slug takes letters, digits, - and _'),
    name: z.string().min(1).max(255),
    manager_type: z.enum(['aws_sm', 'azure_kv', 'hashicorp_vault']),
    auth_config: z.record(z.string(), z.unknown()),
    secret_path: z.string().min(1),
    secret_key: z.string().nullable().optional(),
    description: z.string().nullable().optional(),
    allowed_workspaces: z
      .array(z.string().min(1).max(255))
      .min(1)
      .nullable()
      .optional()
      .describe('slugs of the only workspaces that may use it; null: every workspace'),
    tags: z.record(z.string(), z.string()).nullable().optional(),
  })
  .strict();

export type DesiredSecretReference = z.infer<typeof secretReferenceEntry>;

export interface SecretReferenceRow extends Resource {
  slug: string;
  manager_type: string;
  auth_config: Record<string, unknown>;
  allow_all_workspaces: boolean;
  allowed_workspaces?: string[] | null;
}

/** The auth config as the server shows it back: secret fields masked. */
function shownAuthConfig(auth: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(auth).map(([name, value]) => [
      name,
      AUTH_SECRET_FIELDS.includes(name) && typeof value === 'string' ? maskSecret(value) : value,
    ]),
  );
}

const enc = encodeURIComponent;

/** Steps for the file's secret references: created, or updated field by field. */
export function planSecretReferences(
  desired: readonly DesiredSecretReference[],
  current: readonly SecretReferenceRow[],
  wsSlug: (id: string) => string,
  needWs: (what: string, slug: string) => string,
  problems: string[],
): Step[] {
  return desired.map((r): Step => {
    const what = `secret reference ${r.slug}`;
    for (const ws of r.allowed_workspaces ?? []) needWs(what, ws);
    const now = current.find((row) => row.slug === r.slug);
    if (now && now.manager_type !== r.manager_type)
      problems.push(`${what}: manager_type is ${now.manager_type} on the server and cannot change`);
    const fields: Record<string, unknown> = Object.fromEntries(
      Object.entries({
        name: r.name,
        description: r.description,
        auth_config: r.auth_config,
        secret_path: r.secret_path,
        secret_key: r.secret_key,
        tags: r.tags,
      }).filter(([, v]) => v !== undefined),
    );
    const workspaces =
      r.allowed_workspaces === undefined
        ? {}
        : r.allowed_workspaces === null
          ? { allow_all_workspaces: true }
          : { allowed_workspaces: r.allowed_workspaces };
    if (!now)
      return {
        kind: 'secret_reference',
        name: r.slug,
        action: 'create',
        changes: [...Object.keys(fields), ...Object.keys(workspaces)],
        request: {
          method: 'POST',
          path: '/v1/secret-references',
          body: { slug: r.slug, manager_type: r.manager_type, ...fields, ...workspaces },
        },
      };
    const changes = changedFields(now, fields, {
      auth_config: (c, d) => same(c, shownAuthConfig(d as Record<string, unknown>)),
      tags: (c, d) => same(c ?? {}, d ?? {}),
    });
    const body: Record<string, unknown> = Object.fromEntries(changes.map((name) => [name, fields[name]]));
    // The server shows the workspaces by id; the file names slugs.
    const shownSlugs = now.allow_all_workspaces ? null : (now.allowed_workspaces ?? []).map(wsSlug).sort();
    const wantedSlugs = r.allowed_workspaces === null ? null : [...(r.allowed_workspaces ?? [])].sort();
    if (r.allowed_workspaces !== undefined && !same(shownSlugs, wantedSlugs)) {
      changes.push(r.allowed_workspaces === null ? 'allow_all_workspaces' : 'allowed_workspaces');
      Object.assign(body, workspaces);
    }
    if (changes.length === 0) return { kind: 'secret_reference', name: r.slug, action: 'unchanged', changes };
    return {
      kind: 'secret_reference',
      name: r.slug,
      action: 'update',
      changes,
      request: { method: 'PUT', path: `/v1/secret-references/${enc(r.slug)}`, body },
    };
  });
}
