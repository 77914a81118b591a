import { z } from 'zod';

const flag = (description: string) => z.boolean().describe(description);
const days = (description: string) => z.number().int().min(1).max(3650).nullable().describe(description);

/** Every security setting, with the spec's key names; the organisation sets them, workspaces override them. */
export const securitySettingsShape = {
  membersViewAllData: flag(
    'Workspace members see the logs and analytics of every API key of the workspace; false: only of their own keys.',
  ),
  managersViewAllData: flag(
    'Workspace managers see the logs and analytics of every API key of the workspace; false: only of their own keys.',
  ),
  membersViewAnalytics: flag('Workspace members see analytics.'),
  managersViewAnalytics: flag('Workspace managers see analytics.'),
  membersViewPrompts: flag('Workspace members see prompts.'),
  membersWritePrompts: flag('Workspace members create and change prompts.'),
  managersViewPrompts: flag('Workspace managers see prompts.'),
  managersWritePrompts: flag('Workspace managers create and change prompts.'),
  membersViewConfigs: flag('Workspace members see gateway configs.'),
  membersWriteConfigs: flag('Workspace members create and change gateway configs.'),
  managersViewConfigs: flag('Workspace managers see gateway configs.'),
  managersWriteConfigs: flag('Workspace managers create and change gateway configs.'),
  maxUserApiKeysPerWorkspace: z
    .number()
    .int()
    .min(0)
    .max(100_000)
    .nullable()
    .describe('Most active user API keys one user may hold in one workspace; null: unlimited.'),
  userApiKeyDefaultExpiryDays: days(
    'Expiry given to a new user API key created without expires_at, in days; null: none.',
  ),
  userApiKeyMaxExpiryDays: days('Longest a user API key may live, in days from its creation; null: no maximum.'),
};

export type SecuritySettingKey = keyof typeof securitySettingsShape;
export type SecuritySettings = { [K in SecuritySettingKey]: z.infer<(typeof securitySettingsShape)[K]> };

/** The defaults: everyone sees all data and analytics; members view prompts and configs, managers also write them. */
export const DEFAULT_SECURITY_SETTINGS: Readonly<SecuritySettings> = Object.freeze({
  membersViewAllData: true,
  managersViewAllData: true,
  membersViewAnalytics: true,
  managersViewAnalytics: true,
  membersViewPrompts: true,
  membersWritePrompts: false,
  managersViewPrompts: true,
  managersWritePrompts: true,
  membersViewConfigs: true,
  membersWriteConfigs: false,
  managersViewConfigs: true,
  managersWriteConfigs: true,
  maxUserApiKeysPerWorkspace: null,
  userApiKeyDefaultExpiryDays: null,
  userApiKeyMaxExpiryDays: null,
});

/** How a workspace overrides the organisation: by category, each category a group of keys. */
export const OVERRIDE_CATEGORIES = {
  data_visibility: ['membersViewAllData', 'managersViewAllData'],
  analytics: ['membersViewAnalytics', 'managersViewAnalytics'],
  prompts: ['membersViewPrompts', 'membersWritePrompts', 'managersViewPrompts', 'managersWritePrompts'],
  configs: ['membersViewConfigs', 'membersWriteConfigs', 'managersViewConfigs', 'managersWriteConfigs'],
  user_api_keys: ['maxUserApiKeysPerWorkspace', 'userApiKeyDefaultExpiryDays', 'userApiKeyMaxExpiryDays'],
} as const satisfies Record<string, readonly SecuritySettingKey[]>;

export type OverrideCategory = keyof typeof OVERRIDE_CATEGORIES;
export type WorkspaceOverrides = {
  [C in OverrideCategory]?: Partial<Pick<SecuritySettings, (typeof OVERRIDE_CATEGORIES)[C][number]>>;
};

/**
 * An object that refuses keys it does not know, naming the key as the error's `param` (a
 * strict object would report them on the whole body).
 */
function closedObject<S extends z.ZodRawShape>(shape: S, what: string) {
  const known = Object.keys(shape);
  return (
    z
      .looseObject(shape)
      .superRefine((value, ctx) => {
        for (const key of Object.keys(value)) {
          if (!known.includes(key))
            ctx.addIssue({ code: 'custom', path: [key], message: `not ${what}; known: ${known.join(', ')}` });
        }
      })
      // What the OpenAPI document shows: the refinement does refuse other keys.
      .meta({ additionalProperties: false })
  );
}

function pickShape<K extends SecuritySettingKey>(keys: readonly K[]) {
  return Object.fromEntries(keys.map((key) => [key, securitySettingsShape[key].optional()])) as {
    [P in K]: z.ZodOptional<(typeof securitySettingsShape)[P]>;
  };
}

const settingKeys = Object.keys(securitySettingsShape) as SecuritySettingKey[];

/** `PUT /v1/settings/security`: any subset of the settings; keys left out keep their value. */
export const organisationSettingsBody = closedObject(pickShape(settingKeys), 'a security setting');
export type OrganisationSettingsBody = z.infer<typeof organisationSettingsBody>;

const categoryBody = <C extends OverrideCategory>(category: C) =>
  closedObject(pickShape(OVERRIDE_CATEGORIES[category]), `a setting of the ${category} category`)
    .nullable()
    .optional()
    .describe(`Overrides of ${OVERRIDE_CATEGORIES[category].join(', ')}; null removes the override of the category.`);

/**
 * `PUT /v1/workspaces/:workspaceId/settings/security`: per category, the keys the workspace sets
 * itself (the others follow the organisation); a category given replaces that category's
 * override, `null` removes it, a category left out stays as it is.
 */
export const workspaceOverridesBody = closedObject(
  {
    data_visibility: categoryBody('data_visibility'),
    analytics: categoryBody('analytics'),
    prompts: categoryBody('prompts'),
    configs: categoryBody('configs'),
    user_api_keys: categoryBody('user_api_keys'),
  },
  'an override category',
);
export type WorkspaceOverridesBody = z.infer<typeof workspaceOverridesBody>;

export const workspaceSettingsParams = z.object({ workspaceId: z.string().min(1).max(255) });

const settingsObject = z.object(securitySettingsShape);

export const organisationSettingsObject = z.object({
  object: z.literal('security_settings'),
  scope: z.literal('organisation'),
  organisation_id: z.string(),
  settings: settingsObject,
  last_updated_at: z.string().nullable(),
});

export const workspaceSettingsObject = z.object({
  object: z.literal('security_settings'),
  scope: z.literal('workspace'),
  organisation_id: z.string(),
  workspace_id: z.string(),
  /** Only the categories (and keys) the workspace overrides. */
  overrides: z.record(z.string(), z.record(z.string(), z.union([z.boolean(), z.number(), z.null()]))),
  /** The settings in effect in the workspace: the organisation's, with the overrides applied. */
  settings: settingsObject,
  last_updated_at: z.string().nullable(),
});
