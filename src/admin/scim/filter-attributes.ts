import type { ScimGroupCondition } from '../../storage/repositories/scim-groups.js';
import type { ScimUserCondition } from '../../storage/repositories/scim-users.js';

/** What SCIM filters may name: a module of its own, apart from the services the routes load on first use (issue #19). */

/** Filterable user attributes (lower-cased path → repository condition). */
export const USER_FILTERS = {
  username: 'userName',
  externalid: 'externalId',
  id: 'id',
  'emails.value': 'email',
  emails: 'email',
  active: 'active',
} as const satisfies Record<string, ScimUserCondition['attr']>;

export type UserFilterAttr = (typeof USER_FILTERS)[keyof typeof USER_FILTERS];

/** Filterable group attributes (lower-cased path → repository condition). */
export const GROUP_FILTERS = {
  displayname: 'displayName',
  externalid: 'externalId',
  id: 'id',
  'members.value': 'member',
  members: 'member',
} as const satisfies Record<string, ScimGroupCondition['attr']>;

export type GroupFilterAttr = (typeof GROUP_FILTERS)[keyof typeof GROUP_FILTERS];
