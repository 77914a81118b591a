import { readFileSync, writeFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { apiClient, type ApiClient } from '../helpers/http.js';
import {
  concretePath,
  fill,
  loadOperations,
  operationId,
  parseCompatibility,
  queryString,
  servedBy,
  type DocRow,
  type ReferenceOperation,
} from '../helpers/reference-contract.js';
import { referenceContext } from '../helpers/reference-context.js';
import { startTestServer } from '../helpers/start-test-server.js';

/** What one operation did when called at the reference path with the reference's example. */
interface Outcome {
  op: ReferenceOperation;
  doc: DocRow | undefined;
  served: boolean;
  called: boolean;
  status?: number;
  error?: string;
  /** Null: not checked (not a 2xx, or no schema); else the schema errors, empty when valid. */
  schemaErrors: string[] | null;
}

const accepted = (o: Outcome) => o.status !== undefined && o.status >= 200 && o.status < 300;
const pct = (n: number, of: number) => `${n}/${of}${of === 0 ? '' : ` (${Math.round((100 * n) / of)} %)`}`;

function report(outcomes: Outcome[]): string {
  const served = outcomes.filter((o) => o.served);
  const withExample = served.filter((o) => o.called);
  const checked = outcomes.filter((o) => o.schemaErrors !== null);
  const byStatus = new Map<string, number>();
  for (const o of outcomes)
    byStatus.set(o.doc?.status ?? 'unlisted', (byStatus.get(o.doc?.status ?? 'unlisted') ?? 0) + 1);
  const lines = [
    `Reference API contract (${outcomes.length} control-plane operations)`,
    `  served at the reference path:   ${pct(served.length, outcomes.length)}`,
    `  accepted examples:              ${pct(withExample.filter(accepted).length, withExample.length)} of the operations called`,
    `  schema-valid responses:         ${pct(checked.filter((o) => o.schemaErrors!.length === 0).length, checked.length)} of the 2xx answers with a schema`,
    `  docs/compatibility.md:          ${[...byStatus].map(([s, n]) => `${s} ${n}`).join(', ')}`,
    '  refused examples:',
    ...withExample.filter((o) => !accepted(o)).map((o) => `    ${operationId(o.op)} → ${o.status} ${o.error ?? ''}`),
    '  responses that do not validate:',
    ...checked
      .filter((o) => o.schemaErrors!.length > 0)
      .map((o) => `    ${operationId(o.op)}: ${o.schemaErrors!.slice(0, 4).join('; ')}`),
  ];
  return lines.join('\n');
}

describe("the reference API's operations, called on the real server", () => {
  it('are served at their paths or listed in docs/compatibility.md, and the counts are printed', async () => {
    const operations = loadOperations();
    const doc = parseCompatibility(readFileSync(new URL('../../docs/compatibility.md', import.meta.url), 'utf8'));
    const t = await startTestServer();
    const { context, workspaceKey } = await referenceContext(t);
    const clients: Record<string, ApiClient> = {
      admin: apiClient(t.baseUrl, t.adminKey),
      workspace: workspaceKey,
      none: apiClient(t.baseUrl),
    };
    const ajv = new Ajv({ allErrors: true, strict: false });

    const outcomes: Outcome[] = [];
    for (const op of operations) {
      const row = doc.rows.get(operationId(op));
      const served = servedBy(t.server.routes, op.method, `/v1${op.path}`, op.params) !== undefined;
      const outcome: Outcome = { op, doc: row, served, called: false, schemaErrors: null };
      outcomes.push(outcome);
      if (!served || op.call === false) continue;
      const query = fill(op.example?.query, context) as Record<string, unknown> | undefined;
      const body = op.example?.body === undefined ? undefined : fill(op.example.body, context);
      const res = await clients[op.key ?? 'admin']!.call(
        op.method,
        concretePath(op, context) + queryString(query),
        body,
      );
      outcome.called = true;
      outcome.status = res.status;
      if (!accepted(outcome)) {
        const error = (res.body as { error?: { code?: string; message?: string } } | null)?.error;
        outcome.error = error ? `${error.code}: ${error.message}` : JSON.stringify(res.body).slice(0, 200);
        continue;
      }
      if (op.response === null) continue;
      const validate = ajv.compile(op.response);
      outcome.schemaErrors = validate(res.body)
        ? []
        : (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''}`.trim());
    }
    console.log(report(outcomes));
    // Every outcome as JSON, for whoever updates docs/compatibility.md.
    const dump = process.env.SVCGW_CONTRACT_DUMP;
    if (dump)
      writeFileSync(
        dump,
        JSON.stringify(
          outcomes.map(({ op, ...rest }) => ({ id: operationId(op), ...rest, doc: rest.doc?.status })),
          null,
          2,
        ),
      );

    // Documentation and behaviour may not drift: every operation is listed, as what it is.
    const problems = [...doc.problems];
    const known = new Set(operations.map(operationId));
    for (const id of doc.rows.keys())
      if (!known.has(id)) problems.push(`${id}: listed in docs/compatibility.md but not a reference operation`);
    for (const o of outcomes) {
      const id = operationId(o.op);
      const row = o.doc;
      if (!row) {
        problems.push(`${id}: ${o.served ? 'served' : 'not served'}, and not listed in docs/compatibility.md`);
        continue;
      }
      if ((row.status === 'served' || row.status === 'differs') && !o.served)
        problems.push(`${id}: docs/compatibility.md says ${row.status}, but no route answers at /v1${o.op.path}`);
      if ((row.status === 'served elsewhere' || row.status === 'not yet') && o.served)
        problems.push(`${id}: now answers at its reference path; docs/compatibility.md still says "${row.status}"`);
      if (row.status === 'served elsewhere') {
        if (row.servedAt.length === 0) problems.push(`${id}: "served elsewhere" names no svcgw path`);
        for (const at of row.servedAt) {
          const [method, path] = at.split(' ') as [string, string];
          if (!servedBy(t.server.routes, method, path))
            problems.push(`${id}: said to be served at ${at}, which is not a route`);
        }
      }
      if (row.status === 'served' && o.called && !accepted(o))
        problems.push(
          `${id}: says served, but its example is refused (${o.status} ${o.error}); list the difference (differs)`,
        );
      if (row.status === 'served' && o.schemaErrors && o.schemaErrors.length > 0)
        problems.push(
          `${id}: says served, but the answer does not validate (${o.schemaErrors.slice(0, 3).join('; ')}); list the difference (differs)`,
        );
      if ((row.status === 'differs' || row.status === 'not yet') && row.notes.trim() === '')
        problems.push(`${id}: "${row.status}" without a note saying how or why`);
    }
    expect(problems).toEqual([]);
  }, 180_000);
});
