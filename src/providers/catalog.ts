import type { EndpointType } from './endpoints.js';
import type { AuthStyle, ProviderDefinition } from './types.js';

/*
 * The OpenAI-compatible providers the gateway can route to. Every base URL, auth header and
 * endpoint family here was taken from the provider's own documentation (`docsUrl`); a
 * family is listed only when the provider documents it under the OpenAI path, so that
 * `supportsEndpoint` can refuse early instead of sending a request that would 404 upstream.
 * `proxy` is added to every provider: any other path is passed through unchanged.
 */

const BEARER: AuthStyle = { kind: 'bearer' };

function families(...types: Exclude<EndpointType, 'proxy'>[]): ReadonlySet<EndpointType> {
  return new Set<EndpointType>([...types, 'proxy']);
}

function define(def: Omit<ProviderDefinition, 'wireFormat'>): ProviderDefinition {
  return Object.freeze({ ...def, wireFormat: 'openai' as const });
}

export const OPENAI_COMPATIBLE_PROVIDERS: readonly ProviderDefinition[] = Object.freeze([
  define({
    name: 'openai',
    displayName: 'OpenAI',
    baseUrl: 'https://api.openai.com/v1',
    auth: BEARER,
    endpoints: families(
      'chatComplete',
      'complete',
      'embed',
      'imageGenerate',
      'imageEdit',
      'createSpeech',
      'createTranscription',
      'createTranslation',
      'moderate',
      'createModelResponse',
      'listModels',
    ),
    docsUrl: 'https://platform.openai.com/docs/api-reference',
  }),
  define({
    // The host comes from the resource name (or a custom host), the path from the deployment.
    name: 'azure-openai',
    displayName: 'Azure OpenAI',
    baseUrl: null,
    auth: { kind: 'header', header: 'api-key' },
    endpoints: families(
      'chatComplete',
      'complete',
      'embed',
      'imageGenerate',
      'createSpeech',
      'createTranscription',
      'createTranslation',
    ),
    docsUrl: 'https://learn.microsoft.com/azure/ai-foundry/openai/reference',
  }),
  define({
    name: 'groq',
    displayName: 'Groq',
    baseUrl: 'https://api.groq.com/openai/v1',
    auth: BEARER,
    endpoints: families(
      'chatComplete',
      'createModelResponse',
      'createSpeech',
      'createTranscription',
      'createTranslation',
      'listModels',
    ),
    docsUrl: 'https://console.groq.com/docs/openai',
  }),
  define({
    name: 'together-ai',
    displayName: 'Together AI',
    baseUrl: 'https://api.together.ai/v1',
    auth: BEARER,
    endpoints: families(
      'chatComplete',
      'complete',
      'embed',
      'rerank',
      'imageGenerate',
      'createSpeech',
      'createTranscription',
      'createTranslation',
      'listModels',
    ),
    docsUrl: 'https://docs.together.ai/docs/inference/openai-compatibility',
  }),
  define({
    name: 'fireworks-ai',
    displayName: 'Fireworks AI',
    baseUrl: 'https://api.fireworks.ai/inference/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'complete', 'embed', 'createModelResponse', 'listModels'),
    docsUrl: 'https://docs.fireworks.ai/tools-sdks/openai-compatibility',
  }),
  define({
    name: 'mistral-ai',
    displayName: 'Mistral AI',
    baseUrl: 'https://api.mistral.ai/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'embed', 'moderate', 'createTranscription', 'listModels'),
    docsUrl: 'https://docs.mistral.ai/api/',
  }),
  define({
    // DeepSeek documents both the bare host and '/v1' (kept for OpenAI clients); '/v1' keeps
    // our convention of a versioned base. Its FIM completions live under '/beta' instead.
    name: 'deepseek',
    displayName: 'DeepSeek',
    baseUrl: 'https://api.deepseek.com/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'listModels'),
    docsUrl: 'https://api-docs.deepseek.com/',
  }),
  define({
    name: 'openrouter',
    displayName: 'OpenRouter',
    baseUrl: 'https://openrouter.ai/api/v1',
    auth: BEARER,
    endpoints: families(
      'chatComplete',
      'complete',
      'embed',
      'createModelResponse',
      'createTranscription',
      'listModels',
    ),
    docsUrl: 'https://openrouter.ai/docs/api-reference/overview',
  }),
  define({
    // Perplexity documents its OpenAI-compatible chat at the bare host, without a version.
    name: 'perplexity-ai',
    displayName: 'Perplexity',
    baseUrl: 'https://api.perplexity.ai',
    auth: BEARER,
    endpoints: families('chatComplete'),
    docsUrl: 'https://docs.perplexity.ai/docs/sonar/openai-compatibility',
  }),
  define({
    name: 'x-ai',
    displayName: 'xAI',
    baseUrl: 'https://api.x.ai/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'complete', 'createModelResponse', 'imageGenerate', 'listModels'),
    docsUrl: 'https://docs.x.ai/docs/overview',
  }),
  define({
    name: 'deepinfra',
    displayName: 'DeepInfra',
    baseUrl: 'https://api.deepinfra.com/v1/openai',
    auth: BEARER,
    endpoints: families('chatComplete', 'complete', 'embed', 'listModels'),
    docsUrl: 'https://deepinfra.com/docs/openai_api',
  }),
  define({
    name: 'cerebras',
    displayName: 'Cerebras',
    baseUrl: 'https://api.cerebras.ai/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'complete', 'listModels'),
    docsUrl: 'https://inference-docs.cerebras.ai/resources/openai',
  }),
  define({
    name: 'sambanova',
    displayName: 'SambaNova',
    baseUrl: 'https://api.sambanova.ai/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'complete', 'embed', 'createTranscription', 'listModels'),
    docsUrl: 'https://docs.sambanova.ai/docs/en/features/openai-compatibility',
  }),
  define({
    name: 'nvidia-nim',
    displayName: 'NVIDIA NIM',
    baseUrl: 'https://integrate.api.nvidia.com/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'complete', 'embed', 'listModels'),
    docsUrl: 'https://docs.api.nvidia.com/nim/reference/',
  }),
  define({
    // Local servers accept no key by default; bearer sends one when the operator sets it
    // (Ollama's cloud, LM Studio with authentication on, `vllm serve --api-key`).
    name: 'ollama',
    displayName: 'Ollama',
    baseUrl: 'http://localhost:11434/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'complete', 'embed', 'createModelResponse', 'listModels'),
    docsUrl: 'https://docs.ollama.com/api/openai-compatibility',
  }),
  define({
    name: 'lm-studio',
    displayName: 'LM Studio',
    baseUrl: 'http://localhost:1234/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'complete', 'embed', 'createModelResponse', 'listModels'),
    docsUrl: 'https://lmstudio.ai/docs/api/openai-api',
  }),
  define({
    name: 'vllm',
    displayName: 'vLLM',
    baseUrl: 'http://localhost:8000/v1',
    auth: BEARER,
    endpoints: families(
      'chatComplete',
      'complete',
      'embed',
      'rerank',
      'createModelResponse',
      'createTranscription',
      'createTranslation',
      'listModels',
    ),
    docsUrl: 'https://docs.vllm.ai/en/stable/serving/online_serving.html',
  }),
  define({
    // Anyscale ended multi-tenant Endpoints on 2024-08-01; private endpoints use a custom host.
    name: 'anyscale',
    displayName: 'Anyscale Endpoints',
    baseUrl: 'https://api.endpoints.anyscale.com/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'complete', 'embed', 'listModels'),
    docsUrl: 'https://docs.anyscale.com/endpoints/model-serving/openai-migration-guide',
  }),
  define({
    name: 'hyperbolic',
    displayName: 'Hyperbolic',
    baseUrl: 'https://api.hyperbolic.xyz/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'listModels'),
    docsUrl: 'https://docs.hyperbolic.xyz',
  }),
  define({
    name: 'novita-ai',
    displayName: 'Novita AI',
    baseUrl: 'https://api.novita.ai/openai/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'complete', 'embed', 'rerank', 'listModels'),
    docsUrl: 'https://novita.ai/docs/api-reference/model-apis-introduction',
  }),
  define({
    // Nebius AI Studio is now Nebius Token Factory, with a new host.
    name: 'nebius',
    displayName: 'Nebius Token Factory',
    baseUrl: 'https://api.tokenfactory.nebius.com/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'embed', 'listModels'),
    docsUrl: 'https://docs.tokenfactory.nebius.com/api-reference/introduction',
  }),
  define({
    // Global platform; the China platform is api.moonshot.cn (set it as a custom host).
    name: 'moonshot',
    displayName: 'Moonshot AI (Kimi)',
    baseUrl: 'https://api.moonshot.ai/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'createModelResponse', 'listModels'),
    docsUrl: 'https://platform.kimi.ai/docs/api/overview',
  }),
  define({
    name: 'zhipu',
    displayName: 'Zhipu BigModel (GLM, China)',
    baseUrl: 'https://open.bigmodel.cn/api/paas/v4',
    auth: BEARER,
    endpoints: families('chatComplete', 'embed'),
    docsUrl: 'https://docs.bigmodel.cn',
  }),
  define({
    name: 'z-ai',
    displayName: 'Z.ai (GLM, international)',
    baseUrl: 'https://api.z.ai/api/paas/v4',
    auth: BEARER,
    endpoints: families('chatComplete'),
    docsUrl: 'https://docs.z.ai/guides/develop/openai/python',
  }),
  define({
    // Singapore endpoint; other regions and workspace-specific hosts are set as a custom host.
    name: 'dashscope',
    displayName: 'Alibaba Cloud Model Studio (DashScope)',
    baseUrl: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'embed'),
    docsUrl: 'https://www.alibabacloud.com/help/en/model-studio/compatibility-of-openai-with-dashscope',
  }),
  define({
    // Global platform; the China platform is api.siliconflow.cn (set it as a custom host).
    name: 'siliconflow',
    displayName: 'SiliconFlow',
    baseUrl: 'https://api.siliconflow.com/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'embed', 'rerank', 'listModels'),
    docsUrl: 'https://www.siliconflow.com/blog/openai-sdk-siliconflow-compatibility-checks',
  }),
  define({
    name: 'github-models',
    displayName: 'GitHub Models',
    baseUrl: 'https://models.github.ai/inference',
    auth: BEARER,
    endpoints: families('chatComplete'),
    docsUrl: 'https://docs.github.com/en/github-models/quickstart',
  }),
  define({
    name: 'huggingface',
    displayName: 'Hugging Face Inference Providers',
    baseUrl: 'https://router.huggingface.co/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'listModels'),
    docsUrl: 'https://huggingface.co/docs/inference-providers/index',
  }),
  define({
    // https://api.cloudflare.com/client/v4/accounts/{account_id}/ai/v1 — one per account.
    name: 'cloudflare-workers-ai',
    displayName: 'Cloudflare Workers AI',
    baseUrl: null,
    auth: BEARER,
    endpoints: families('chatComplete', 'embed', 'createModelResponse'),
    requiresCustomHost: true,
    docsUrl: 'https://developers.cloudflare.com/workers-ai/configuration/open-ai-compatibility',
  }),
  define({
    name: 'featherless-ai',
    displayName: 'Featherless AI',
    baseUrl: 'https://api.featherless.ai/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'complete', 'listModels'),
    docsUrl: 'https://featherless.ai/docs/api-overview-and-common-options',
  }),
  define({
    name: 'nscale',
    displayName: 'Nscale',
    baseUrl: 'https://inference.api.nscale.com/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'listModels'),
    docsUrl: 'https://docs.nscale.com/docs/inference/serverless-models/overview',
  }),
  define({
    name: 'inference-net',
    displayName: 'Inference.net',
    baseUrl: 'https://api.inference.net/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'listModels'),
    docsUrl: 'https://docs.inference.net/api/api-quickstart',
  }),
  define({
    // https://serving.app.predibase.com/{tenant_id}/deployments/v2/llms/{deployment}/v1
    name: 'predibase',
    displayName: 'Predibase',
    baseUrl: null,
    auth: BEARER,
    endpoints: families('chatComplete'),
    requiresCustomHost: true,
    docsUrl: 'https://docs.predibase.com/user-guide/inference/migrate-openai',
  }),
  define({
    name: 'ai21',
    displayName: 'AI21 Labs',
    baseUrl: 'https://api.ai21.com/studio/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'listModels'),
    docsUrl: 'https://docs.ai21.com/reference/jamba-1-6-api-ref',
  }),
  define({
    // Model APIs; a dedicated deployment has its own host (model-{id}.api.baseten.co/…/v1), set as a custom host.
    name: 'baseten',
    displayName: 'Baseten Model APIs',
    baseUrl: 'https://inference.baseten.co/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'listModels'),
    docsUrl: 'https://docs.baseten.co/reference/inference-api/chat-completions',
  }),
  define({
    // Serverless endpoints; dedicated endpoints use https://api.friendli.ai/dedicated/v1 as a custom host.
    name: 'friendli-ai',
    displayName: 'FriendliAI',
    baseUrl: 'https://api.friendli.ai/serverless/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'complete', 'listModels'),
    docsUrl: 'https://friendli.ai/docs/openapi/model-apis/chat-completions',
  }),
  define({
    name: 'upstage',
    displayName: 'Upstage (Solar)',
    baseUrl: 'https://api.upstage.ai/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'embed'),
    docsUrl: 'https://console.upstage.ai/docs/getting-started',
  }),
  define({
    // International platform; the China platform is api.minimaxi.com (set it as a custom host).
    name: 'minimax',
    displayName: 'MiniMax',
    baseUrl: 'https://api.minimax.io/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'createModelResponse', 'listModels'),
    docsUrl: 'https://platform.minimax.io/docs/api-reference/text-openai-api',
  }),
  define({
    // Serverless Generative APIs; project-scoped (api.scaleway.ai/{project_id}/v1) and dedicated
    // deployments ({uuid}.ifr.fr-par.scaleway.com/v1) are set as a custom host.
    name: 'scaleway',
    displayName: 'Scaleway Generative APIs',
    baseUrl: 'https://api.scaleway.ai/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'embed', 'createModelResponse', 'listModels'),
    docsUrl: 'https://www.scaleway.com/en/docs/generative-apis/reference-content/openai-compatibility/',
  }),
  define({
    name: 'venice-ai',
    displayName: 'Venice.ai',
    baseUrl: 'https://api.venice.ai/api/v1',
    auth: BEARER,
    endpoints: families('chatComplete', 'embed', 'listModels'),
    docsUrl: 'https://docs.venice.ai/api-reference/api-spec',
  }),
]);

/** Other names people use for a provider (as other gateways and SDKs spell them). */
export const PROVIDER_ALIASES: Readonly<Record<string, string>> = Object.freeze({
  'open-ai': 'openai',
  azure: 'azure-openai',
  mistral: 'mistral-ai',
  together: 'together-ai',
  fireworks: 'fireworks-ai',
  perplexity: 'perplexity-ai',
  xai: 'x-ai',
  nvidia: 'nvidia-nim',
  lmstudio: 'lm-studio',
  novita: 'novita-ai',
  kimi: 'moonshot',
  zai: 'z-ai',
  'hugging-face': 'huggingface',
  'workers-ai': 'cloudflare-workers-ai',
  featherless: 'featherless-ai',
  friendli: 'friendli-ai',
  friendliai: 'friendli-ai',
  venice: 'venice-ai',
});
