import { z } from 'zod';
import type { Clock } from '../../../lib/clock.js';
import { notFound } from '../../../lib/errors.js';
import { isUuid } from '../../../lib/ids.js';
import type { ZodApp } from '../../../http/zod-app.js';
import type { Db } from '../../../storage/database.js';
import { createFeedbackStore } from './feedback-store.js';

/** The spec's key-type table: creating and updating feedback is for workspace keys only. */
const WORKSPACE_ONLY = ['workspace'] as const;
const TAG = ['Feedback'];

const value = z.number().int().min(-10).max(10).describe('Integer from −10 (worst) to 10 (best).');
const weight = z.number().min(0).max(1).describe('0 to 1; default 1.');
const MAX_METADATA_BYTES = 16 * 1024;
const metadata = z
  .record(z.string(), z.unknown())
  .refine(
    (m) => JSON.stringify(m).length <= MAX_METADATA_BYTES,
    `metadata is larger than ${MAX_METADATA_BYTES} bytes of JSON`,
  )
  .describe('Any JSON object (up to 16 KiB), shown with the feedback.');
const TRACE_ID_RE = /^[A-Za-z0-9_.:/-]{1,128}$/;

const createBody = z
  .object({
    trace_id: z.string().regex(TRACE_ID_RE, 'trace_id must be 1–128 characters of A-Z a-z 0-9 _ . : / -'),
    value,
    weight: weight.optional(),
    metadata: metadata.optional(),
  })
  .strict();
const updateBody = z.object({ value, weight: weight.optional(), metadata: metadata.optional() }).strict();
const feedbackResponse = z.object({ status: z.string(), message: z.string(), feedback_ids: z.array(z.uuid()) });

/**
 * `POST /v1/feedback` and `PUT /v1/feedback/:id`. Feedback is stored in the workspace of the
 * key that gives it and shows on the log records and the trace of that workspace with the same
 * trace id. The trace need not have been logged yet: clients often send feedback right after the
 * answer, before the batched log is written.
 */
export function registerFeedbackRoutes(app: ZodApp, deps: { db: Db; clock: Clock }): void {
  const store = createFeedbackStore(deps.db);
  const now = () => new Date(deps.clock.now()).toISOString();

  app.post(
    '/v1/feedback',
    {
      schema: { tags: TAG, summary: 'Give feedback on a trace', body: createBody, response: { 200: feedbackResponse } },
      config: {
        auth: { scope: 'feedback.create', keyTypes: WORKSPACE_ONLY },
        audit: { resourceType: 'feedback', action: 'create' },
      },
    },
    async (request) => {
      const principal = request.principal!;
      const body = request.body;
      const row = await store.create(
        {
          organisation_id: principal.organisationId,
          workspace_id: principal.workspaceId!,
          trace_id: body.trace_id,
          value: body.value,
          weight: body.weight ?? 1,
          metadata: body.metadata === undefined ? null : JSON.stringify(body.metadata),
          api_key_id: principal.keyId,
        },
        now(),
      );
      request.auditResourceId = row.id;
      return { status: 'success', message: 'feedback created', feedback_ids: [row.id] };
    },
  );

  app.put(
    '/v1/feedback/:id',
    {
      schema: {
        tags: TAG,
        summary: 'Change feedback',
        description: 'Replaces the value; weight and metadata change when given and are kept otherwise.',
        params: z.object({ id: z.string().max(64) }),
        body: updateBody,
        response: { 200: feedbackResponse },
      },
      config: {
        auth: { scope: 'feedback.update', keyTypes: WORKSPACE_ONLY },
        audit: { resourceType: 'feedback', action: 'update' },
      },
    },
    async (request) => {
      const principal = request.principal!;
      const id = request.params.id;
      const row = isUuid(id) ? await store.find(principal.organisationId, id) : undefined;
      // Another workspace's feedback is as good as absent to this key.
      if (!row || row.workspace_id !== principal.workspaceId) throw notFound('Feedback');
      const body = request.body;
      await store.update(row.id, {
        value: body.value,
        weight: body.weight ?? row.weight,
        metadata: body.metadata === undefined ? row.metadata : JSON.stringify(body.metadata),
        last_updated_at: now(),
      });
      request.auditResourceId = row.id;
      return { status: 'success', message: 'feedback updated', feedback_ids: [row.id] };
    },
  );
}
