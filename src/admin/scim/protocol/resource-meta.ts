import { sha256Hex } from '../../../lib/crypto.js';
import type { JsonObject } from './attributes.js';
import { SCIM_BASE_PATH } from './schema-urns.js';

/**
 * A resource's version (ETag) is a digest of what it shows, meta aside: it changes exactly when
 * the resource does, whichever route changed it, with no counter to keep.
 */
export const versionOf = (resource: JsonObject): string => `W/"${sha256Hex(JSON.stringify(resource)).slice(0, 20)}"`;

export const locationOf = (baseUrl: string, type: 'Users' | 'Groups', id: string): string =>
  `${baseUrl}${SCIM_BASE_PATH}/${type}/${id}`;

/** The resource with its `meta` (RFC 7643 §3.1) last, as providers show it. */
export function withMeta(
  resource: JsonObject,
  meta: { resourceType: 'User' | 'Group'; created: string; lastModified: string; location: string },
): JsonObject {
  return { ...resource, meta: { ...meta, version: versionOf(resource) } };
}
