import { z } from 'zod';
import { invalid } from '../../lib/errors.js';
import { configurationsSchema, type Configurations } from '../credentials/schemas.js';

/**
 * The reference's virtual-key bodies name provider settings in camelCase at the top level
 * (`apiVersion`, `deploymentConfig`, `awsRegion`, …). They are the `configurations` fields of
 * svcgw under other names: each is moved there, where it takes effect, and validated there.
 */
const CAMEL_TO_SETTING = {
  apiVersion: 'azure_api_version',
  resourceName: 'azure_resource_name',
  deploymentName: 'azure_deployment_name',
  awsAccessKeyId: 'aws_access_key_id',
  awsSecretAccessKey: 'aws_secret_access_key',
  awsSessionToken: 'aws_session_token',
  awsRegion: 'aws_region',
  awsRoleArn: 'aws_role_arn',
  awsExternalId: 'aws_external_id',
  awsAuthType: 'aws_auth_type',
  vertexProjectId: 'vertex_project_id',
  vertexRegion: 'vertex_region',
  vertexServiceAccountJson: 'vertex_service_account_json',
  workersAiAccountId: 'workers_ai_account_id',
} as const;

type CamelName = keyof typeof CAMEL_TO_SETTING;

const camelText = (setting: string) =>
  z.unknown().optional().describe(`Same as configurations.${setting} (null: not set).`);

export const camelSettingFields = {
  ...(Object.fromEntries(
    Object.entries(CAMEL_TO_SETTING).map(([camel, setting]) => [camel, camelText(setting)]),
  ) as Record<CamelName, z.ZodOptional<z.ZodUnknown>>),
  deploymentConfig: z
    .array(
      z
        .object({
          deploymentName: z.string(),
          apiVersion: z.string(),
          alias: z.string().optional(),
          is_default: z.boolean().optional(),
          azure_model_slug: z.string().optional(),
        })
        .strict(),
    )
    .max(50)
    .nullable()
    .optional()
    .describe('Same as configurations.azure_deployment_config (deploymentName and apiVersion in camelCase).'),
};

type CamelInput = { [K in CamelName]?: unknown } & {
  deploymentConfig?: z.infer<typeof camelSettingFields.deploymentConfig>;
};

/**
 * `configurations` with the camelCase fields moved in; undefined when the body has neither.
 * A setting sent under both names with different values is refused, and a bad value names the
 * field the client sent.
 */
export function mergeCamelSettings(
  body: CamelInput & { configurations?: Configurations | undefined },
  base: Record<string, unknown> | undefined,
): Configurations | undefined {
  const moved: Record<string, unknown> = {};
  const sentAs = new Map<string, string>();
  for (const [camel, setting] of Object.entries(CAMEL_TO_SETTING)) {
    const value = body[camel as CamelName];
    if (value === undefined || value === null) continue;
    moved[setting] = value;
    sentAs.set(setting, camel);
  }
  if (body.deploymentConfig) {
    moved.azure_deployment_config = body.deploymentConfig.map(({ deploymentName, apiVersion, ...rest }) => ({
      azure_deployment_name: deploymentName,
      azure_api_version: apiVersion,
      ...rest,
    }));
    sentAs.set('azure_deployment_config', 'deploymentConfig');
  }
  if (sentAs.size === 0) return body.configurations;
  const own = body.configurations ?? {};
  for (const [setting, camel] of sentAs) {
    if (setting in own && JSON.stringify(own[setting as keyof Configurations]) !== JSON.stringify(moved[setting]))
      throw invalid(
        camel,
        `${camel} and configurations.${setting} are the same setting and disagree; send one of them.`,
      );
  }
  const merged = { ...(body.configurations ?? base ?? {}), ...moved };
  const parsed = configurationsSchema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const [head, ...rest] = issue.path.map(String);
    const camel = head === undefined ? undefined : sentAs.get(head);
    const param = camel
      ? [camel, ...rest].join('.')
      : ['configurations', ...(head === undefined ? [] : [head]), ...rest].join('.');
    throw invalid(param, `${param}: ${issue.message}`);
  }
  return parsed.data;
}
