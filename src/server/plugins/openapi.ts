import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { API_KEY_HEADER } from './auth.js';

/** Builds the OpenAPI 3 document from the routes' zod schemas; registered before the routes. */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
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
  });
}
