import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpUpstreams } from '../../mcp/upstream-pool.js';
import type { UpstreamSession } from '../../mcp/upstream-session.js';
import { McpUpstreamError } from '../../mcp/upstream-session.js';
import { runToolCall, type CallContext, type ToolCallDeps } from './tool-call.js';

export interface BridgeDeps extends ToolCallDeps {
  upstreams: McpUpstreams;
  /** Time limit of one upstream request (reset by progress notifications). */
  timeoutMs: number;
  /** A list showed a capability the catalogue does not know: the integration should be synced. */
  onUnknownCapability: (integrationId: string) => void;
}

type Meta = { progressToken?: string | number; [key: string]: unknown };
type Extra = {
  signal: AbortSignal;
  sendNotification: (notification: {
    method: 'notifications/progress';
    params: Record<string, unknown>;
  }) => Promise<void>;
};

/** Request params without the client's progress token (the upstream client asks for its own). */
function forwarded<P extends { _meta?: Meta | undefined }>(params: P): P {
  if (!params._meta || params._meta.progressToken === undefined) return params;
  const { progressToken: _token, ...meta } = params._meta;
  const rest = { ...params };
  if (Object.keys(meta).length > 0) rest._meta = meta;
  else delete rest._meta;
  return rest;
}

/** Options of the upstream request: the client's cancellation, and its progress relayed back to it. */
function upstreamOptions(deps: BridgeDeps, params: { _meta?: Meta | undefined }, extra: Extra): RequestOptions {
  const token = params._meta?.progressToken;
  return {
    signal: extra.signal,
    timeout: deps.timeoutMs,
    ...(token !== undefined
      ? {
          resetTimeoutOnProgress: true,
          onprogress: (progress) =>
            void extra
              .sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken: token } })
              .catch(() => {}),
        }
      : {}),
  };
}

/** An upstream failure as a JSON-RPC error: the server's own errors as it sent them. */
function asMcpError(error: unknown): unknown {
  if (error instanceof McpError) return error;
  if (error instanceof McpUpstreamError) return new McpError(ErrorCode.InternalError, error.message);
  return new McpError(ErrorCode.InternalError, 'The upstream MCP server could not be reached.');
}

/**
 * The MCP server a client talks to for one HTTP request, built with the official SDK's
 * `Server`: it announces what the upstream server announces (without list-changed or
 * subscriptions: svcgw serves MCP without sessions), and answers each request through the
 * pooled upstream connection, leaving out what is disabled and refusing it when named.
 */
export function createBridgeServer(deps: BridgeDeps, context: CallContext, session: UpstreamSession): Server {
  const { view } = context;
  const upstream = session.metadata;
  const announced = upstream.capabilities as ServerCapabilities;
  const capabilities: ServerCapabilities = {
    ...(announced.tools ? { tools: {} } : {}),
    ...(announced.prompts ? { prompts: {} } : {}),
    ...(announced.resources ? { resources: {} } : {}),
    ...(announced.completions ? { completions: {} } : {}),
  };
  const server = new Server(
    {
      name: upstream.serverInfo.name,
      version: upstream.serverInfo.version,
      title: view.server.name,
      ...(upstream.serverInfo.websiteUrl ? { websiteUrl: upstream.serverInfo.websiteUrl } : {}),
    },
    { capabilities, ...(upstream.instructions ? { instructions: upstream.instructions } : {}) },
  );
  const use = <T>(work: (s: UpstreamSession) => Promise<T>): Promise<T> =>
    deps.upstreams.use(view.endpoint, work).catch((error: unknown) => {
      throw asMcpError(error);
    });
  const noteUnknown = (found: boolean) => {
    if (found) deps.onUnknownCapability(view.integration.id);
  };

  if (capabilities.tools) {
    server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
      const params = forwarded(request.params ?? {});
      const page = await use((s) => s.client.listTools(params, upstreamOptions(deps, params, extra)));
      noteUnknown(page.tools.some((tool) => !view.known('tool', tool.name)));
      return { ...page, tools: page.tools.filter((tool) => !view.disabled('tool', tool.name)) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const options = upstreamOptions(deps, request.params, extra);
      return runToolCall(deps, context, forwarded(request.params), extra.signal, (params) =>
        deps.upstreams.use(view.endpoint, (s) =>
          s.client.request({ method: 'tools/call', params }, CallToolResultSchema, options),
        ),
      );
    });
  }

  if (capabilities.prompts) {
    server.setRequestHandler(ListPromptsRequestSchema, async (request, extra) => {
      const params = forwarded(request.params ?? {});
      const page = await use((s) => s.client.listPrompts(params, upstreamOptions(deps, params, extra)));
      noteUnknown(page.prompts.some((prompt) => !view.known('prompt', prompt.name)));
      return { ...page, prompts: page.prompts.filter((prompt) => !view.disabled('prompt', prompt.name)) };
    });
    server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
      if (view.disabled('prompt', request.params.name))
        throw new McpError(ErrorCode.InvalidParams, `Prompt ${request.params.name} not found`);
      const params = forwarded(request.params);
      return use((s) => s.client.getPrompt(params, upstreamOptions(deps, params, extra)));
    });
  }

  if (capabilities.resources) {
    server.setRequestHandler(ListResourcesRequestSchema, async (request, extra) => {
      const params = forwarded(request.params ?? {});
      const page = await use((s) => s.client.listResources(params, upstreamOptions(deps, params, extra)));
      noteUnknown(page.resources.some((resource) => !view.known('resource', resource.uri)));
      return { ...page, resources: page.resources.filter((resource) => !view.resourceRefused(resource.uri)) };
    });
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async (request, extra) => {
      const params = forwarded(request.params ?? {});
      const page = await use((s) => s.client.listResourceTemplates(params, upstreamOptions(deps, params, extra)));
      noteUnknown(page.resourceTemplates.some((t) => !view.known('resource_template', t.uriTemplate)));
      return {
        ...page,
        resourceTemplates: page.resourceTemplates.filter((t) => !view.disabled('resource_template', t.uriTemplate)),
      };
    });
    server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
      if (view.resourceRefused(request.params.uri))
        throw new McpError(ErrorCode.InvalidParams, `Resource ${request.params.uri} not found`);
      const params = forwarded(request.params);
      return use((s) => s.client.readResource(params, upstreamOptions(deps, params, extra)));
    });
  }

  if (capabilities.completions) {
    server.setRequestHandler(CompleteRequestSchema, async (request, extra) => {
      const ref = request.params.ref;
      const refused =
        ref.type === 'ref/prompt' ? view.disabled('prompt', ref.name) : view.disabled('resource_template', ref.uri);
      if (refused) throw new McpError(ErrorCode.InvalidParams, 'The completion refers to something not found');
      const params = forwarded(request.params);
      return use((s) => s.client.complete(params, upstreamOptions(deps, params, extra)));
    });
  }
  return server;
}
