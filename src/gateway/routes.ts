import type { FastifyInstance, FastifyRequest } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { AppError } from '../lib/errors.js';
import { ENDPOINT_PATHS, type EndpointType } from '../providers/endpoints.js';
import { BOTH_KEY_TYPES, type RouteAccess } from '../server/route-config.js';
import type { PricingService } from '../pricing/pricing-service.js';
import { createGatewayHandler, type GatewayDeps } from './handle-request.js';
import { chatCompletionBody, completionBody, embeddingsBody, imageGenerationBody, moderationBody, rerankBody, responsesBody, speechBody } from './request-schemas.js';

const GATEWAY_AUTH = { auth: { scope: 'completions.write', keyTypes: BOTH_KEY_TYPES } } as const;
const TAG = ['Gateway'];

const JSON_ROUTES: Array<[EndpointType, z.ZodType, string]> = [
  ['chatComplete', chatCompletionBody, 'Chat completion (OpenAI format; `stream: true` relays server-sent events)'],
  ['complete', completionBody, 'Text completion'],
  ['embed', embeddingsBody, 'Embeddings'],
  ['rerank', rerankBody, "Rerank (the provider's body is returned unchanged)"],
  ['imageGenerate', imageGenerationBody, 'Image generation'],
  ['createSpeech', speechBody, 'Text to speech (binary audio)'],
  ['moderate', moderationBody, 'Moderation'],
  ['createModelResponse', responsesBody, 'Responses API'],
];
const MULTIPART_ROUTES: EndpointType[] = ['imageEdit', 'createTranscription', 'createTranslation'];

/**
 * The data plane: OpenAI-compatible routes with validation, and every other /v1 path passed
 * through unchanged. Registered last: paths under a control-plane prefix (/v1/workspaces/…)
 * never reach a provider, even for a method the admin API lacks.
 */
export async function registerGatewayRoutes(app: FastifyInstance, deps: GatewayDeps & { controlPlane: RouteAccess[] }): Promise<void> {
  const handle = createGatewayHandler(deps);
  const controlPlaneSegments = new Set(deps.controlPlane.map((route) => route.url.split('/')[2]).filter((segment): segment is string => Boolean(segment)));

  // JSON routes: the bytes are kept next to the parsed body so an unchanged body is forwarded as received.
  await app.register(async (json) => {
    json.removeAllContentTypeParsers();
    json.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      const bytes = body as Buffer;
      request.rawBody = bytes;
      try {
        done(null, JSON.parse(bytes.toString('utf8')));
      } catch {
        done(new AppError('INVALID_JSON', 'Request body is not valid JSON.'), undefined);
      }
    });
    const zjson = json.withTypeProvider<ZodTypeProvider>();
    zjson.setValidatorCompiler(validatorCompiler);
    zjson.setSerializerCompiler(serializerCompiler);
    for (const [endpointType, schema, summary] of JSON_ROUTES) {
      const { path } = ENDPOINT_PATHS[endpointType as Exclude<EndpointType, 'proxy'>];
      zjson.post(`/v1${path}`, { schema: { tags: TAG, summary, body: schema }, config: GATEWAY_AUTH }, (request, reply) => handle({ endpointType, body: 'json' }, request, reply));
    }
  });

  // Raw routes: the body streams to the provider untouched (multipart uploads, pass-through).
  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    for (const endpointType of MULTIPART_ROUTES) {
      const { path } = ENDPOINT_PATHS[endpointType as Exclude<EndpointType, 'proxy'>];
      raw.post(`/v1${path}`, { schema: { tags: TAG, summary: `${endpointType} (multipart, forwarded as sent)` }, config: GATEWAY_AUTH }, (request, reply) => handle({ endpointType, body: 'raw' }, request, reply));
    }
    raw.get('/v1/models', { schema: { tags: TAG, summary: "List models: the provider's list with a provider header, else the models svcgw has prices for" }, config: GATEWAY_AUTH }, (request, reply) =>
      hasProviderHeader(request) ? handle({ endpointType: 'listModels', body: 'raw' }, request, reply) : reply.send(localModelList(deps.pricing)),
    );
    raw.all('/v1/*', { schema: { tags: TAG, summary: 'Pass-through: any other provider endpoint, forwarded and returned unchanged' }, config: GATEWAY_AUTH }, (request, reply) => {
      const segment = request.url.split(/[/?]/)[2] ?? '';
      if (controlPlaneSegments.has(segment)) {
        throw new AppError('ROUTE_NOT_FOUND', `No route for ${request.method} ${request.url.split('?')[0]}.`);
      }
      return handle({ endpointType: 'proxy', body: 'raw' }, request, reply);
    });
  });
}

function hasProviderHeader(request: FastifyRequest): boolean {
  return request.headers['x-service-provider'] !== undefined || request.headers['x-service-virtual-key'] !== undefined;
}

function localModelList(pricing: PricingService) {
  return { object: 'list', data: pricing.models().map(({ provider, model }) => ({ id: model, object: 'model', created: 0, owned_by: provider })) };
}

