import { MAX_RESULTS } from './list-query.js';
import { SCIM_BASE_PATH, URN } from './schema-urns.js';

/**
 * The discovery resources of RFC 7644 §4, which Okta and Microsoft Entra ID read to learn what
 * this service provider supports: PATCH, filters (eq on the attributes docs/scim.md lists),
 * ETags; no bulk, no sorting, no password changes.
 */
export function serviceProviderConfig(baseUrl: string) {
  return {
    schemas: [URN.serviceProviderConfig],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'OAuth Bearer Token',
        description: 'A SCIM token created with POST /v1/scim/tokens, sent as Authorization: Bearer <token>.',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${baseUrl}${SCIM_BASE_PATH}/ServiceProviderConfig` },
  };
}

const RESOURCE_TYPES = {
  User: {
    name: 'User',
    endpoint: '/Users',
    description: 'A user of the organisation',
    schema: URN.user,
    schemaExtensions: [{ schema: URN.enterpriseUser, required: false }],
  },
  Group: {
    name: 'Group',
    endpoint: '/Groups',
    description: 'A group; mappings grant its members workspaces',
    schema: URN.group,
    schemaExtensions: [],
  },
} as const;

export type ResourceTypeName = keyof typeof RESOURCE_TYPES;
export const isResourceTypeName = (name: string): name is ResourceTypeName => name in RESOURCE_TYPES;

export function resourceType(name: ResourceTypeName, baseUrl: string) {
  return {
    schemas: [URN.resourceType],
    id: name,
    ...RESOURCE_TYPES[name],
    meta: { resourceType: 'ResourceType', location: `${baseUrl}${SCIM_BASE_PATH}/ResourceTypes/${name}` },
  };
}

export const allResourceTypes = (baseUrl: string) =>
  (Object.keys(RESOURCE_TYPES) as ResourceTypeName[]).map((name) => resourceType(name, baseUrl));

interface Attribute {
  name: string;
  type: 'string' | 'boolean' | 'complex' | 'reference' | 'dateTime';
  multiValued: boolean;
  required: boolean;
  mutability: 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
  returned: 'always' | 'default' | 'never';
  uniqueness: 'none' | 'server' | 'global';
  caseExact: boolean;
  description: string;
  subAttributes?: Attribute[];
  referenceTypes?: string[];
}

const attr = (
  name: string,
  description: string,
  options: Partial<Omit<Attribute, 'name' | 'description'>> = {},
): Attribute => ({
  name,
  type: 'string',
  multiValued: false,
  required: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  caseExact: false,
  description,
  ...options,
});

const multiValue = (label: string, extra: Attribute[] = []): Attribute[] => [
  attr('value', `The ${label}.`),
  attr('display', `A name for the ${label}.`),
  attr('type', `The kind of ${label} (work, home, other).`),
  attr('primary', `Whether this is the primary ${label}.`, { type: 'boolean' }),
  ...extra,
];

const USER_ATTRIBUTES: Attribute[] = [
  attr('userName', 'Unique identifier of the user, often an e-mail address.', { required: true, uniqueness: 'server' }),
  attr('name', "The user's name; givenName and familyName are svcgw's first and last name.", {
    type: 'complex',
    subAttributes: ['formatted', 'familyName', 'givenName', 'middleName', 'honorificPrefix', 'honorificSuffix'].map(
      (sub) => attr(sub, `The ${sub} part of the name.`),
    ),
  }),
  attr('displayName', 'The name shown for the user.'),
  attr('title', "The user's title."),
  attr('locale', "The user's locale."),
  attr('active', 'False deactivates the user: their API keys and sessions stop working until it is true again.', {
    type: 'boolean',
  }),
  attr('password', 'Never stored: svcgw users sign in with single sign-on or use API keys.', {
    mutability: 'writeOnly',
    returned: 'never',
  }),
  attr('emails', 'E-mail addresses; the primary one (else the work one, else the first) is the svcgw address.', {
    type: 'complex',
    multiValued: true,
    subAttributes: multiValue('e-mail address'),
  }),
  attr('groups', 'The groups the user is in (shown, and writable, with SCIM_MEMBERSHIP_USER_MODE=ON).', {
    type: 'complex',
    multiValued: true,
    mutability: 'readOnly',
    subAttributes: [
      attr('value', 'The id of the group.'),
      attr('display', 'The name of the group.'),
      attr('$ref', 'The URI of the group.', { type: 'reference', referenceTypes: ['Group'] }),
    ],
  }),
];

const GROUP_ATTRIBUTES: Attribute[] = [
  attr('displayName', 'The name of the group, unique in the organisation; mappings may name a group by it.', {
    required: true,
    uniqueness: 'server',
  }),
  attr('members', 'The users in the group.', {
    type: 'complex',
    multiValued: true,
    subAttributes: [
      attr('value', 'The id of the user.', { mutability: 'immutable' }),
      attr('display', 'The userName of the user.', { mutability: 'readOnly' }),
      attr('$ref', 'The URI of the user.', { type: 'reference', referenceTypes: ['User'], mutability: 'immutable' }),
    ],
  }),
];

const ENTERPRISE_ATTRIBUTES: Attribute[] = [
  'employeeNumber',
  'costCenter',
  'organization',
  'division',
  'department',
].map((name) => attr(name, `Kept as sent: ${name}.`));

const SCHEMAS = [
  { id: URN.user, name: 'User', description: 'User Account', attributes: USER_ATTRIBUTES },
  { id: URN.group, name: 'Group', description: 'Group', attributes: GROUP_ATTRIBUTES },
  { id: URN.enterpriseUser, name: 'EnterpriseUser', description: 'Enterprise User', attributes: ENTERPRISE_ATTRIBUTES },
];

export function schemaResource(id: string, baseUrl: string) {
  const schema = SCHEMAS.find((candidate) => candidate.id.toLowerCase() === id.toLowerCase());
  if (!schema) return null;
  return {
    schemas: [URN.schema],
    ...schema,
    meta: { resourceType: 'Schema', location: `${baseUrl}${SCIM_BASE_PATH}/Schemas/${schema.id}` },
  };
}

export const allSchemas = (baseUrl: string) => SCHEMAS.map((schema) => schemaResource(schema.id, baseUrl)!);
