import { z } from 'zod';
import { invalid } from '../../lib/errors.js';
import type { McpCapabilityRow } from '../../storage/repositories/mcp-integrations.js';
import type { McpCapabilityType } from '../../storage/schema.js';

export const capabilityType = z.enum(['tool', 'prompt', 'resource', 'resource_template']);

/**
 * Paging of the MCP capability, user-access and connection lists: the reference's 1-based
 * `page`, or svcgw's 0-based `current_page` (one of the two).
 */
export const mcpPageQuery = {
  page: z.coerce.number().int().min(1).optional().describe("1-based page number (the reference's name)."),
  current_page: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe('0-based page number, as in the other lists (give page or current_page, not both).'),
  page_size: z.coerce.number().int().min(1).max(500).default(100).describe('Items per page (1 to 500).'),
};

export function mcpPageWindow(query: {
  page?: number | undefined;
  current_page?: number | undefined;
  page_size: number;
}) {
  if (query.page !== undefined && query.current_page !== undefined)
    throw invalid('page', 'Give page (1-based) or current_page (0-based), not both.');
  const index = query.current_page ?? (query.page ?? 1) - 1;
  return { limit: query.page_size, offset: index * query.page_size };
}

export const listCapabilitiesQuery = z.object({ type: capabilityType.optional(), ...mcpPageQuery }).strict();

export const capabilityItem = z.object({
  name: z.string().describe('Tool or prompt name, resource URI or URI template.'),
  type: capabilityType,
  title: z.string().nullable(),
  description: z.string().nullable(),
  enabled: z.boolean(),
  definition: z.unknown().describe('The item as the server lists it (input schema, arguments, mime type, …).'),
  last_updated_at: z.string(),
});

const count = z.object({ total: z.number(), enabled: z.number() });
export const capabilityCounts = z.object({
  tools: count,
  prompts: count,
  resources: count,
  resource_templates: count,
});

export const capabilityList = z.object({
  object: z.literal('list'),
  data: z.array(capabilityItem),
  counts: capabilityCounts,
  total: z.number(),
  has_more: z.boolean(),
});

export const serverCapabilityList = capabilityList.extend({
  data: z.array(
    capabilityItem.extend({
      integration_enabled: z
        .boolean()
        .describe('Whether the integration enables it; `enabled` is what the server allows.'),
    }),
  ),
});

export const updateCapabilitiesBody = z
  .object({
    capabilities: z
      .array(z.object({ name: z.string().min(1).max(4096), type: capabilityType, enabled: z.boolean() }).strict())
      .min(1)
      .max(1000),
  })
  .strict();

export const successObject = z.object({ success: z.boolean() });

export type CapabilityItem = z.infer<typeof capabilityItem>;
export type CapabilityCounts = z.infer<typeof capabilityCounts>;
export type UpdateCapabilitiesBody = z.infer<typeof updateCapabilitiesBody>;
export type ListCapabilitiesQuery = z.infer<typeof listCapabilitiesQuery>;

export function toCapabilityItem(row: McpCapabilityRow, enabled = row.enabled === 1): CapabilityItem {
  return {
    name: row.name,
    type: row.type,
    title: row.title,
    description: row.description,
    enabled,
    definition: JSON.parse(row.definition) as unknown,
    last_updated_at: row.last_updated_at,
  };
}

const COUNT_KEYS: Record<McpCapabilityType, keyof CapabilityCounts> = {
  tool: 'tools',
  prompt: 'prompts',
  resource: 'resources',
  resource_template: 'resource_templates',
};

/** Totals and enabled counts per kind, from (type, enabled) pairs. */
export function countCapabilities(items: Iterable<{ type: McpCapabilityType; enabled: boolean }>): CapabilityCounts {
  const counts: CapabilityCounts = {
    tools: { total: 0, enabled: 0 },
    prompts: { total: 0, enabled: 0 },
    resources: { total: 0, enabled: 0 },
    resource_templates: { total: 0, enabled: 0 },
  };
  for (const item of items) {
    const entry = counts[COUNT_KEYS[item.type]];
    entry.total++;
    if (item.enabled) entry.enabled++;
  }
  return counts;
}
