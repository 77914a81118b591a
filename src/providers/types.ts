import type { EndpointType } from './endpoints.js';

/** How a provider expects its credential: a bearer token, a named header, or none at all. */
export type AuthStyle =
  { kind: 'bearer' } | { kind: 'header'; header: string } | { kind: 'none' } | { kind: 'adapter'; description: string };

/** Wire formats: 'openai' is forwarded as it is; the others are translated by src/providers/adapters/<format>. */
export type WireFormat = 'openai' | 'anthropic' | 'google' | 'vertex-ai' | 'bedrock' | 'cohere';

/**
 * What the gateway knows about one upstream provider, as data. It says where the provider
 * lives and how it authenticates; it knows nothing of keys, limits or storage.
 */
export interface ProviderDefinition {
  /** Registry id, e.g. 'openai', 'together-ai'. */
  name: string;
  displayName: string;
  /**
   * Default base URL including the version segment (e.g. 'https://api.openai.com/v1'), or
   * null when every account has its own host and a custom host is required.
   */
  baseUrl: string | null;
  auth: AuthStyle;
  wireFormat: WireFormat;
  /** Endpoint families the provider serves; 'proxy' is always included. */
  endpoints: ReadonlySet<EndpointType>;
  requiresCustomHost?: boolean;
  docsUrl?: string;
}

export interface UpstreamTarget {
  url: string;
  headers: Record<string, string>;
}

export interface TargetContext {
  /** Provider credential; null for local servers that need none. */
  apiKey: string | null;
  /** Overrides the default base URL; the caller has already checked it is an http(s) URL. */
  customHost?: string | null;
  /** Azure OpenAI only: the resource, deployment and API version of the target. */
  azure?: { resourceName?: string; deploymentId?: string; apiVersion?: string };
  /** A stored credential's settings, secret fields decrypted (region, project, service account, …). */
  configurations?: Readonly<Record<string, unknown>>;
}
