import type { SwaggerOptions } from '@fastify/swagger';
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { API_KEY_HEADER } from './auth.js';

/** The OpenAPI 3 document, as @fastify/swagger builds it. */
export type OpenApiDocument = Record<string, unknown>;

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI 3 document of every route registered on this app; built on the first call, then kept. */
    openApiDocument(): Promise<OpenApiDocument>;
  }
}

function swaggerOptions(version: string): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'svcgw API',
        version,
        description:
          'Gateway and administration API of svcgw. Every error body is {"error": {message, type, param, code}}.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          'Service-Key': { type: 'apiKey', in: 'header', name: API_KEY_HEADER },
          // The SCIM protocol routes (/v1/scim/v2/…) take an identity provider's SCIM token instead.
          'SCIM-Token': { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ 'Service-Key': [] }],
    },
    transform: jsonSchemaTransform,
  };
}

/**
 * Records the routes' options (their zod schemas) as they are registered; the OpenAPI document is
 * built from them on first request. @fastify/swagger and what it loads (a YAML library, a JSON
 * schema resolver: ~100 modules, ~1 MB of heap) are then loaded only by a server whose document
 * is read, not by every `svcgw serve` (issue #19). Registered before the routes.
 */
export function registerOpenApi(app: FastifyInstance, version: string): void {
  const routes: RouteOptions[] = [];
  // @fastify/swagger leaves HEAD routes out of the document (fastify adds one to each GET).
  app.addHook('onRoute', (route) => {
    if (route.method !== 'HEAD') routes.push(route);
  });
  let document: Promise<OpenApiDocument> | undefined;
  app.decorate('openApiDocument', () => {
    document ??= buildDocument(routes, version).catch((error: unknown) => {
      document = undefined;
      throw error;
    });
    return document;
  });
}

/**
 * @fastify/swagger on a fastify instance of its own holding the same routes (their method, path,
 * constraints, schema and config: all the document is made of), with handlers that never run.
 */
async function buildDocument(routes: readonly RouteOptions[], version: string): Promise<OpenApiDocument> {
  const { default: swagger } = await import('@fastify/swagger');
  // HEAD routes were left out above; none is added here either.
  const doc = Fastify({ exposeHeadRoutes: false });
  try {
    doc.setValidatorCompiler(validatorCompiler);
    doc.setSerializerCompiler(serializerCompiler);
    await doc.register(swagger, swaggerOptions(version));
    const handler = async () => null;
    for (const route of routes) {
      doc.route({
        method: route.method,
        url: route.url,
        ...(route.constraints ? { constraints: route.constraints } : {}),
        ...(route.schema ? { schema: route.schema } : {}),
        ...(route.config ? { config: route.config } : {}),
        handler,
      });
    }
    await doc.ready();
    return doc.swagger() as unknown as OpenApiDocument;
  } finally {
    await doc.close();
  }
}
