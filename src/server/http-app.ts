import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
} from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { randomUUID } from 'node:crypto';
import type { Config } from '../config/schema.js';
import { AppError } from '../lib/errors.js';
import { exceedsJsonDepth, jsonTooDeepMessage } from '../lib/json-depth.js';
import type { Logger } from '../telemetry/logger.js';
import { createClientErrorHandler } from './client-errors.js';
import { createUrlRewriter } from './normalize-path.js';
import { deferredChildLogger } from './request-logger.js';
import { answerFrameworkError } from './plugins/errors.js';

const REQUEST_ID_RE = /^[A-Za-z0-9_.:-]{1,128}$/;

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

/**
 * Every route's schemas are zod's (the compilers are also set on the app below, as before). Given
 * as fastify's compiler factories, they keep fastify from loading its JSON-schema compilers (ajv's
 * and fast-json-stringify's, ~40 modules) at start, which no route would use. fastify types the
 * factories for JSON-schema compilers; it calls them with a route's schema as it does the zod ones.
 */
const zodCompilers = {
  buildValidator: () => validatorCompiler,
  buildSerializer: () => serializerCompiler,
} as unknown as CompilersFactory;

/**
 * The fastify instance with svcgw's HTTP rules: request ids, one path spelling, framework and
 * client errors in the one error body, JSON only (depth-limited) on admin routes.
 * `controlPlaneSegments` is filled once the control plane's routes are registered.
 */
export function createHttpApp(
  deps: { config: Config; logger: Logger },
  controlPlaneSegments: ReadonlySet<string>,
): FastifyInstance {
  const app = Fastify({
    // fastify infers its logger type from this; the base type keeps the app assignable to FastifyInstance.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
    loggerInstance: deps.logger as FastifyBaseLogger,
    // fastify's two lines per request are off: a gateway request gets one access line, written
    // from its log record (telemetry/access-log.ts); control-plane changes are in the audit log.
    logController: new LogController({ disableRequestLogging: true }),
    // A request's pino child is made only if the request logs (most never do): request-logger.ts.
    childLoggerFactory: deferredChildLogger,
    bodyLimit: deps.config.max_body_bytes,
    // A client's own request id is kept when it is sane, so that both sides can quote one id.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    // One spelling per path before routing; refused spellings are answered by the request gate.
    rewriteUrl: createUrlRewriter({
      keepsEncodedSlashes: (path) => controlPlaneSegments.has(path.split('/')[2] ?? ''),
    }),
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: createClientErrorHandler(deps.logger),
    // The request gate answers requests that arrive while closing, in the one error body, logged.
    return503OnClosing: false,
    schemaController: { compilersFactory: zodCompilers },
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Admin routes take JSON only; anything else is a 415, not a confusing validation error.
  app.removeContentTypeParser('text/plain');
  // fastify's JSON parser (prototype-poisoning checks included), behind a depth limit: what runs
  // on a parsed body recurses, and a body nested thousands deep must be a 400, not a 500.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (exceedsJsonDepth(body)) return done(new AppError('INVALID_JSON', jsonTooDeepMessage()), undefined);
    return parseJson(request, body as string, done);
  });

  return app;
}
