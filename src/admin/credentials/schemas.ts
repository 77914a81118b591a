import { z } from 'zod';
import { invalid } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { TagFilter } from '../../storage/repositories/integrations.js';

/** `name` and `slug` bounds of integrations, providers and virtual keys (spec: Limits). */
export const credentialName = z.string().min(1).max(255);
/** Slugs are looked up where ids are too, so a slug may not look like a UUID. */
export const credentialSlug = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[a-zA-Z0-9_-]+$/, 'slug takes letters, digits, - and _')
  .refine((slug) => !isUuid(slug), { message: 'slug must not have the form of a UUID' });
/** Provider slugs that would be shadowed by a fixed path (`GET /v1/providers/catalog`). */
export const RESERVED_PROVIDER_SLUGS: ReadonlySet<string> = new Set(['catalog']);

export const credentialStatus = z.enum(['active', 'archived']);
export const freeText = z.string().max(2048);

/** A provider key. Control characters would end up in an upstream header, so none are allowed. */
export const providerKey = z
  .string()
  .min(1)
  .max(16_384)
  .refine((value) => !/[\0\r\n]/.test(value), { message: 'key must not contain NUL, CR or LF characters' });

export const providerTypeId = z.string().min(1).max(64);

/** http(s) only, no credentials in the URL (they would be stored and shown in clear), no query or fragment. */
export const httpUrl = z
  .string()
  .max(2048)
  .superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL' });
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL' });
    else if (url.username || url.password)
      ctx.addIssue({ code: 'custom', message: 'must not carry a user name or password; put the credential in key' });
    else if (url.search || url.hash)
      ctx.addIssue({ code: 'custom', message: 'must not carry a query string or fragment' });
  })
  .describe('An http(s) base URL, without credentials, query string or fragment.');

// Control characters are exactly what these patterns keep out of tags.
// eslint-disable-next-line no-control-regex
const TAG_KEY = /^[^:,\u0000-\u001f]{1,128}$/;
// eslint-disable-next-line no-control-regex
const TAG_VALUE = /^[^,\u0000-\u001f]{0,256}$/;
/** Key-value tags. Keys hold no `:` or `,` and values no `,`, so that `tags=k:v,k2:v2` can name any of them. */
export const tagsSchema = z
  .record(
    z.string().regex(TAG_KEY, 'tag keys are 1 to 128 characters without : or ,'),
    z.string().regex(TAG_VALUE, 'tag values are up to 256 characters without ,'),
  )
  .refine((tags) => Object.keys(tags).length <= 50, { message: 'at most 50 tags' });

export const tagsQuery = z
  .string()
  .max(4096)
  .regex(/^[^:,]+:[^,]*(,[^:,]+:[^,]*)*$/, 'tags is a comma-separated list of key:value')
  .describe('key:value pairs separated by commas; items must carry all of them.');

/** `env:prod,team:ml` → `{ env: 'prod', team: 'ml' }` (the value is everything after the first `:`). */
export function parseTagFilter(text: string | undefined): TagFilter | undefined {
  if (text === undefined) return undefined;
  const pairs = text.split(',').map((pair): [string, string] => {
    const at = pair.indexOf(':');
    if (at <= 0) throw invalid('tags', 'tags is a comma-separated list of key:value');
    return [pair.slice(0, at), pair.slice(at + 1)];
  });
  return Object.fromEntries(pairs);
}

const shortText = z.string().min(1).max(256);
const azureName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/, 'letters, digits and -, up to 64 characters');
const azureDeployment = z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, ., - and _, up to 64 characters');
const azureApiVersion = z.string().regex(/^[A-Za-z0-9.-]{1,32}$/, 'an API version such as 2024-10-21');
const headerName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/, 'a valid HTTP header name');
const headerValue = z
  .string()
  .max(8192)
  .refine((value) => !/[\0\r\n]/.test(value), { message: 'header values must not contain NUL, CR or LF' });

/**
 * Provider settings stored with a credential: the fields the gateway's adapters read, with the
 * names users of the established gateway know. Any other field is refused (a typo such as
 * `custom_hots` would otherwise be stored and traffic would go to the provider's default host);
 * the refusal names the field and lists the known ones. Fields whose names say they are secret
 * are encrypted at rest like the key (see secrets.ts).
 */
const configurationFields = {
  custom_host: httpUrl.optional(),
  custom_headers: z
    .record(headerName, headerValue)
    .refine((h) => Object.keys(h).length <= 50, { message: 'at most 50 headers' })
    .optional(),
  openai_organization: shortText.optional(),
  openai_project: shortText.optional(),
  azure_resource_name: azureName.optional(),
  azure_deployment_name: azureDeployment.optional(),
  azure_api_version: azureApiVersion.optional(),
  azure_auth_mode: z.enum(['default', 'entra', 'managed']).optional(),
  azure_foundry_url: httpUrl.optional(),
  azure_deployment_config: z
    .array(
      z
        .object({
          azure_deployment_name: azureDeployment,
          azure_api_version: azureApiVersion,
          alias: shortText.optional(),
          is_default: z.boolean().optional(),
          azure_model_slug: shortText.optional(),
        })
        .strict(),
    )
    .max(50)
    .optional(),
  aws_auth_type: z.enum(['accessKey', 'assumedRole']).optional(),
  aws_region: z
    .string()
    .regex(/^[a-z0-9-]{1,32}$/, 'an AWS region such as us-east-1')
    .optional(),
  aws_access_key_id: shortText.optional(),
  aws_secret_access_key: shortText.optional(),
  aws_session_token: z.string().min(1).max(4096).optional(),
  aws_role_arn: shortText.optional(),
  aws_external_id: shortText.optional(),
  vertex_auth_type: z.enum(['basic', 'serviceAccount']).optional(),
  vertex_region: shortText.optional(),
  vertex_project_id: shortText.optional(),
  vertex_service_account_json: z.union([z.string().min(1).max(16_384), z.record(z.string(), z.unknown())]).optional(),
  workers_ai_account_id: shortText.optional(),
  huggingface_base_url: httpUrl.optional(),
  anthropic_version: shortText.optional(),
  anthropic_beta: shortText.optional(),
  // Microsoft Entra ID for Azure OpenAI (providers/azure-entra.ts).
  azure_tenant_id: shortText.optional(),
  azure_client_id: shortText.optional(),
  azure_client_secret: z.string().min(1).max(4096).optional(),
  azure_authority_host: httpUrl.optional(),
  /** The older name of azure_deployment_name, still read by the gateway. */
  azure_deployment_id: azureDeployment.optional(),
};
const KNOWN: ReadonlySet<string> = new Set(Object.keys(configurationFields));

export const configurationsSchema = z
  .object(configurationFields)
  // Unknown fields pass the object and are refused one by one below, so that `param` names each.
  .catchall(z.unknown())
  .superRefine((config, ctx) => {
    for (const name of Object.keys(config)) {
      if (!KNOWN.has(name))
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `unknown provider setting ${name}; known settings: ${[...KNOWN].sort().join(', ')}`,
        });
    }
  });

export type Configurations = z.infer<typeof configurationsSchema>;

/** The settings `configurations` takes, sorted; the CLI refuses others before sending. */
export const KNOWN_CONFIGURATION_FIELDS: readonly string[] = [...KNOWN].sort();
