import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { SyncedCapability } from '../storage/repositories/mcp-integrations.js';

/** At most this many items of one kind are read from a server (pages of its own size). */
const MAX_ITEMS = 5000;

type Page<T> = { items: T[]; nextCursor?: string | undefined };

async function readAll<T>(list: (cursor: string | undefined) => Promise<Page<T>>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  const seen = new Set<string>();
  do {
    const page = await list(cursor);
    out.push(...page.items);
    cursor = page.nextCursor;
    // A server that repeats a cursor would page forever.
    if (cursor !== undefined && seen.has(cursor)) break;
    if (cursor !== undefined) seen.add(cursor);
  } while (cursor !== undefined && out.length < MAX_ITEMS);
  return out.slice(0, MAX_ITEMS);
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/**
 * Every tool, prompt, resource and resource template the server lists, of the kinds its
 * capabilities announce, with their definitions as listed (the catalogue svcgw enables and
 * disables capabilities in).
 */
export async function readCatalogue(
  client: Client,
  capabilities: Record<string, unknown>,
  timeoutMs: number,
): Promise<SyncedCapability[]> {
  const options = { timeout: timeoutMs };
  const found: SyncedCapability[] = [];
  if (capabilities.tools) {
    const tools = await readAll(async (cursor) => {
      const page = await client.listTools(cursor ? { cursor } : undefined, options);
      return { items: page.tools, nextCursor: page.nextCursor };
    });
    for (const tool of tools)
      found.push({
        type: 'tool',
        name: tool.name,
        title: text(tool.title) ?? text(tool.annotations?.title),
        description: text(tool.description),
        definition: JSON.stringify(tool),
      });
  }
  if (capabilities.prompts) {
    const prompts = await readAll(async (cursor) => {
      const page = await client.listPrompts(cursor ? { cursor } : undefined, options);
      return { items: page.prompts, nextCursor: page.nextCursor };
    });
    for (const prompt of prompts)
      found.push({
        type: 'prompt',
        name: prompt.name,
        title: text(prompt.title),
        description: text(prompt.description),
        definition: JSON.stringify(prompt),
      });
  }
  if (capabilities.resources) {
    const resources = await readAll(async (cursor) => {
      const page = await client.listResources(cursor ? { cursor } : undefined, options);
      return { items: page.resources, nextCursor: page.nextCursor };
    });
    for (const resource of resources)
      found.push({
        type: 'resource',
        name: resource.uri,
        title: text(resource.title) ?? text(resource.name),
        description: text(resource.description),
        definition: JSON.stringify(resource),
      });
    const templates = await readAll(async (cursor) => {
      const page = await client.listResourceTemplates(cursor ? { cursor } : undefined, options);
      return { items: page.resourceTemplates, nextCursor: page.nextCursor };
    });
    for (const template of templates)
      found.push({
        type: 'resource_template',
        name: template.uriTemplate,
        title: text(template.title) ?? text(template.name),
        description: text(template.description),
        definition: JSON.stringify(template),
      });
  }
  return found;
}
