import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { BOTH_KEY_TYPES } from '../http/route-config.js';
import type { ZodApp } from '../http/zod-app.js';
import { AppError, invalid } from '../lib/errors.js';
import type { Db } from '../storage/database.js';
import {
  abandon,
  beginRequestTransaction,
  currentRequestTransaction,
  runInRequestTransaction,
  type RequestTransaction,
} from '../storage/request-transaction.js';
import { API_KEY_HEADER } from './plugins/auth.js';
import { addTransactionHooks } from './route-hooks.js';

export const DRY_RUN_HEADER = 'x-service-dry-run';
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const transactions = new WeakMap<FastifyRequest, RequestTransaction>();

declare module 'fastify' {
  interface FastifyRequest {
    /** `x-service-dry-run: true` on a mutation: it runs in full and is then undone, unaudited. */
    dryRun: boolean;
  }
}

/**
 * Dry runs of admin mutations. A request with `x-service-dry-run: true` runs its whole handler
 * (validation, tenant walls, uniqueness, references) inside a database transaction that is rolled
 * back before the answer is sent: the answer says what would have happened, and nothing of it
 * stays, audit record included. Only audited routes (the control plane's mutations) take it: a
 * gateway request would call a provider, which no rollback undoes.
 *
 * Requests made by `POST /v1/dry-run` join that route's transaction instead of opening their
 * own, so that a sequence (a workspace, then a provider in it) is checked as one.
 */
export function registerDryRun(app: FastifyInstance, deps: { db: Db }): void {
  app.decorateRequest('dryRun', false);

  // Before validation, so that a dry run refused by validation is not audited either. Every
  // request runs it (the header is refused where there is no dry run): callback-style, no promise.
  app.addHook('preValidation', (request, _reply, done) => {
    const header = request.headers[DRY_RUN_HEADER];
    if (header === undefined || READ_METHODS.has(request.method)) return done();
    if (header !== 'true' && header !== 'false')
      return done(invalid(DRY_RUN_HEADER, `${DRY_RUN_HEADER} takes true or false.`));
    if (header === 'false') return done();
    if (!request.routeOptions.config.audit)
      return done(
        invalid(DRY_RUN_HEADER, `${request.method} ${request.routeOptions.url ?? request.url} has no dry run.`),
      );
    request.dryRun = true;
    done();
  });

  // Only audited routes take a dry run: the transaction's hooks are theirs alone.
  app.addHook('onRoute', (route) => {
    if (!route.config?.audit) return;
    addTransactionHooks(route, {
      db: deps.db,
      transactions,
      // Inside POST /v1/dry-run the writes go to its transaction, which it rolls back.
      wanted: (request) => request.dryRun && !currentRequestTransaction(),
    });
  });

  // Global, in this place among the onSend hooks: the dry run is undone before the caches are
  // told of changes (build-app.ts), as an audited change is committed before.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.dryRun) return done(null, payload);
    reply.header(DRY_RUN_HEADER, 'true');
    const tx = transactions.get(request);
    transactions.delete(request);
    if (!tx) return done(null, payload);
    abandon(tx).then(() => done(null, payload), done);
  });
}

const stepSchema = z
  .object({
    method: z.enum(['POST', 'PUT', 'DELETE']),
    path: z
      .string()
      .min(1)
      .max(2048)
      .regex(/^\/v1\//, 'an admin API path such as /v1/workspaces'),
    body: z.unknown().optional(),
  })
  .strict();

const resultSchema = z.object({
  method: z.string(),
  path: z.string(),
  status: z.number().int(),
  error: z.object({ message: z.string(), code: z.string().nullable(), param: z.string().nullable() }).nullable(),
});

/**
 * `POST /v1/dry-run`: runs a sequence of admin mutations as the caller, each as it would run,
 * in one transaction rolled back at the end. It stops at the first refusal; the answer lists each
 * request's status (and the refusal's error), never a created resource (a new key would be in it).
 */
export function registerDryRunRoute(zapp: ZodApp, deps: { db: Db }): void {
  zapp.post(
    '/v1/dry-run',
    {
      schema: {
        tags: ['System'],
        summary: 'Check a sequence of admin mutations as the caller, changing nothing',
        body: z.object({ requests: z.array(stepSchema).min(1).max(1000) }).strict(),
        response: {
          200: z.object({ object: z.literal('dry_run'), ok: z.boolean(), results: z.array(resultSchema) }),
        },
      },
      config: { auth: { scope: null, keyTypes: BOTH_KEY_TYPES } },
    },
    async (request) => {
      const key = request.headers[API_KEY_HEADER];
      const headers: Record<string, string> = { [DRY_RUN_HEADER]: 'true' };
      if (typeof key === 'string') headers[API_KEY_HEADER] = key;
      else if (typeof request.headers.authorization === 'string') headers.authorization = request.headers.authorization;
      const tx = await beginRequestTransaction(deps.db);
      const results: z.infer<typeof resultSchema>[] = [];
      try {
        await runInRequestTransaction(tx, async () => {
          for (const step of request.body.requests) {
            const res = await zapp.inject({
              method: step.method,
              url: step.path,
              headers: step.body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
              ...(step.body === undefined ? {} : { payload: JSON.stringify(step.body) }),
            });
            const error = res.statusCode >= 400 ? errorOf(res.body) : null;
            results.push({ method: step.method, path: step.path, status: res.statusCode, error });
            if (error) return;
          }
        });
      } finally {
        await abandon(tx);
      }
      return { object: 'dry_run' as const, ok: results.every((r) => r.error === null), results };
    },
  );
}

function errorOf(body: string): { message: string; code: string | null; param: string | null } {
  try {
    const error = (JSON.parse(body) as { error?: { message?: unknown; code?: unknown; param?: unknown } }).error;
    return {
      message: typeof error?.message === 'string' ? error.message : 'refused',
      code: typeof error?.code === 'string' ? error.code : null,
      param: typeof error?.param === 'string' ? error.param : null,
    };
  } catch {
    throw new AppError('INTERNAL_ERROR', 'A dry-run request was answered with something other than JSON.');
  }
}
