import fc from 'fast-check';
import { included } from './known-defects.js';
import { jsonWire, mutatedBody, wireBody, type WireBody } from './mutations.js';
import type { Operation, Parameter } from './openapi.js';
import { violations } from './schema-check.js';
import { valueFor } from './schema-values.js';
import type { Caller, FuzzWorld, KnownId } from './world.js';

/** One generated HTTP request and what the properties need to judge its answer. */
export interface FuzzRequest {
  operation: string;
  caller: Caller['name'];
  method: string;
  url: string;
  headers: Record<string, string>;
  body: WireBody | null;
  /** What was done to the body (for the report). */
  bodyLabel: string;
  /** The JSON value behind the body, kept short in reports. */
  bodyValue: unknown;
  /** The body breaks the envelope or the documented schema: the server must refuse it. */
  mustRefuse: boolean;
  /** A path parameter names a resource of another workspace than the workspace key's. */
  foreignResource: boolean;
}

/** Methods that change something: they never get the fixtures the other properties need. */
export const changes = (method: string) => !['GET', 'HEAD', 'OPTIONS', 'TRACE'].includes(method);

const MALFORMED_PERCENT = ['%ZZ', '%', '%u0041', '%C0%AF', '%FF%FE'];
const RAW_SEGMENTS = [
  '%00',
  '%2F',
  '%E2%80%AE',
  '..%2F..%2Fetc',
  '%252F',
  '.',
  '..',
  '%20',
  '+',
  ';x=1',
  ...(included('bad-percent-encoding') ? MALFORMED_PERCENT : []),
];
const ODD_QUERY_VALUES = [
  'abc',
  '-1',
  '1e309',
  '99999999999999999999999',
  '1.5',
  '',
  'true',
  '%00',
  '%ZZ',
  '[object Object]',
  'null',
  'NaN',
  '-0',
  '0x10',
];

const recent = (maxDaysAgo: number) =>
  fc.integer({ min: 0, max: maxDaysAgo * 24 }).map((hours) => new Date(Date.now() - hours * 3_600_000).toISOString());

/** Query values whose rules are in their descriptions, not in the schema (JSON objects, column lists, time windows). */
const QUERY_HINTS: Record<string, fc.Arbitrary<unknown>> = {
  metadata: fc.constantFrom('{"team":"search"}', '{}', '{"a":"1","b":"2"}'),
  columns: fc
    .subarray(['cost', 'total_tokens', 'avg_tokens', 'avg_latency', 'p95_latency', 'success_rate'], { minLength: 1 })
    .map((c) => c.join(',')),
  start_time: recent(14),
  end_time: recent(1),
  time_of_generation_min: recent(14),
  time_of_generation_max: recent(1),
};

function knownFor(operation: Operation, param: Parameter, world: FuzzWorld): KnownId[] {
  const segment = operation.path.split('/')[2] ?? '';
  const pool = world.ids[`${segment}:${param.name}`] ?? world.ids[param.name] ?? [];
  return changes(operation.method) ? pool.filter((id) => !id.kept) : pool;
}

/** A path parameter: a known id (own or foreign) or, when `broken`, also an unknown uuid, an odd, encoded or huge string. */
function pathValue(
  operation: Operation,
  param: Parameter,
  world: FuzzWorld,
  broken: boolean,
): fc.Arbitrary<{ text: string; foreign: boolean }> {
  const plain = (arb: fc.Arbitrary<string>) => arb.map((text) => ({ text, foreign: false }));
  if (param.name === '*') {
    const segment = fc.oneof(
      fc.constantFrom('models', 'files', 'fine_tuning', 'jobs', 'batches', 'workspaces', 'configs', 'assistants'),
      fc.constantFrom(...RAW_SEGMENTS),
      fc.string({ minLength: 1, maxLength: 12 }).map(encodeURIComponent),
    );
    return plain(fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/')));
  }
  const known = knownFor(operation, param, world);
  const options: Array<fc.WeightedArbitrary<{ text: string; foreign: boolean }>> = [
    {
      arbitrary: plain(valueFor(param.schema, world.known, param.name).map((v) => encodeURIComponent(String(v)))),
      weight: 2,
    },
    { arbitrary: plain(fc.uuid({ version: 4 })), weight: 2 },
    {
      arbitrary: plain(fc.string({ minLength: 1, maxLength: 20, unit: 'grapheme' }).map(encodeURIComponent)),
      weight: 1,
    },
    { arbitrary: plain(fc.constantFrom(...RAW_SEGMENTS)), weight: 1 },
    { arbitrary: plain(fc.integer({ min: 300, max: 6000 }).map((n) => 'a'.repeat(n))), weight: 1 },
  ];
  const knownValue =
    known.length > 0
      ? fc.constantFrom(...known).map((id) => ({ text: encodeURIComponent(id.value), foreign: id.foreign }))
      : null;
  if (!broken) return knownValue ?? options[0]!.arbitrary;
  if (knownValue) options.push({ arbitrary: knownValue, weight: 2 });
  return fc.oneof(...options);
}

/** A query string: documented parameters with valid values, or when `broken` also wrong values, repeats, unknown names. */
function queryString(operation: Operation, world: FuzzWorld, broken: boolean): fc.Arbitrary<string> {
  const validValue = (param: Parameter) =>
    (QUERY_HINTS[param.name] ?? valueFor(param.schema, world.known, param.name)).map((v) =>
      encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v)),
    );
  const entries = operation.queryParams.map((param) =>
    fc.option(
      (broken
        ? fc.oneof(
            { arbitrary: validValue(param), weight: 2 },
            { arbitrary: fc.constantFrom(...ODD_QUERY_VALUES), weight: 2 },
            {
              arbitrary: fc
                .integer({ min: 1000, max: included('url-over-16k') ? 9000 : 3000 })
                .map((n) => 'q'.repeat(n)),
              weight: 1,
            },
            {
              arbitrary: fc.tuple(fc.constant('1'), fc.constant('2')).map(([a, b]) => `${a}&${param.name}=${b}`),
              weight: 1,
            },
          )
        : validValue(param)
      ).map((value) => `${encodeURIComponent(param.name)}=${value}`),
      { freq: broken ? 2 : 3 },
    ),
  );
  const unknown = broken
    ? fc.option(fc.constantFrom('fuzz_unknown=1', 'page_size[]=1', '__proto__=x', 'constructor[prototype]=1'), {
        freq: 3,
      })
    : fc.constant(null);
  return fc.tuple(fc.tuple(...entries), unknown).map(([params, extra]) => {
    const parts = [...params, extra].filter((p): p is string => p !== null);
    return parts.length > 0 ? `?${parts.join('&')}` : '';
  });
}

/** A body for a route without a JSON schema (pass-through, multipart, actions without a body). */
function looseBody(
  world: FuzzWorld,
  broken: boolean,
): fc.Arbitrary<{ wire: WireBody | null; value: unknown; label: string }> {
  if (!broken) return fc.constant({ wire: null, value: undefined, label: 'no body' });
  return fc.oneof(
    fc.constant({ wire: null, value: undefined, label: 'no body' }),
    fc
      .jsonValue({ maxDepth: 3 })
      .chain((value) => wireBody(value, world.maxBodyBytes).map((wire) => ({ wire, value, label: wire.label }))),
    fc.uint8Array({ maxLength: 64 }).map((bytes) => ({
      wire: {
        bytes: Buffer.from(bytes),
        contentType: 'multipart/form-data; boundary=fuzz',
        label: 'random multipart bytes',
        brokenEnvelope: false,
        sameValue: false,
      },
      value: undefined,
      label: 'random multipart bytes',
    })),
  );
}

function bodyFor(
  operation: Operation,
  world: FuzzWorld,
  broken: boolean,
): fc.Arbitrary<{ wire: WireBody | null; value: unknown; label: string; mustRefuse: boolean }> {
  const schema = operation.body;
  if (!schema) return looseBody(world, broken).map((b) => ({ ...b, mustRefuse: false }));
  const valid = valueFor(schema, world.known);
  if (!broken)
    return valid.map((body) => ({
      wire: jsonWire(body),
      value: body,
      label: 'valid-ish',
      mustRefuse: violations(schema, body).length > 0,
    }));
  return mutatedBody(schema, valid).chain(({ body, label }) =>
    wireBody(body, world.maxBodyBytes).map((wire) => {
      const envelope = wire.brokenEnvelope && (wire.label !== 'empty body' || operation.bodyRequired);
      const schemaBroken = wire.sameValue && violations(schema, body).length > 0;
      return { wire, value: body, label: `${label}; ${wire.label}`, mustRefuse: envelope || schemaBroken };
    }),
  );
}

/** Which part of the request is broken: one at a time, so that each mutation reaches its check. */
type Focus = 'none' | 'path' | 'query' | 'body';

export function requestFor(operation: Operation, world: FuzzWorld): fc.Arbitrary<FuzzRequest> {
  const focus = fc.constantFrom<Focus>('none', 'path', 'query', 'body', 'body');
  return focus.chain((f) => requestWith(operation, world, f));
}

function requestWith(operation: Operation, world: FuzzWorld, focus: Focus): fc.Arbitrary<FuzzRequest> {
  const params = operation.pathParams.map((param) =>
    pathValue(operation, param, world, focus === 'path').map((v) => ({ name: param.name, ...v })),
  );
  const caller = fc.oneof(
    { arbitrary: fc.constant(world.callers[0]!), weight: 5 },
    { arbitrary: fc.constant(world.callers[1]!), weight: 5 },
    { arbitrary: fc.constant(world.callers[2]!), weight: 1 },
  );
  const provider = operation.gateway
    ? fc.oneof(
        ...world.providerHeaders.map((headers, i) => ({ arbitrary: fc.constant(headers), weight: i < 4 ? 4 : 1 })),
      )
    : fc.constant({});
  const requestId = fc.option(fc.constantFrom('fuzz-1', 'a b<c>', 'x'.repeat(300), '../..'), { freq: 4 });
  return fc
    .record({
      params: fc.tuple(...params),
      query: queryString(operation, world, focus === 'query'),
      body: bodyFor(operation, world, focus === 'body'),
      caller,
      provider,
      requestId,
    })
    .map(({ params, query, body, caller: who, provider: providerHeaders, requestId: rid }) => {
      let path = operation.path;
      for (const p of params) path = path.replace(`{${p.name}}`, p.text);
      const headers: Record<string, string> = { ...providerHeaders };
      if (who.key) headers['x-service-api-key'] = who.key;
      if (rid) headers['x-request-id'] = rid;
      if (body.wire?.contentType) headers['content-type'] = body.wire.contentType;
      return {
        operation: operation.id,
        caller: who.name,
        method: operation.method,
        url: `${path}${query}`,
        headers,
        body: body.wire,
        bodyLabel: body.label,
        bodyValue: body.value,
        mustRefuse: body.mustRefuse,
        foreignResource: params.some((p) => p.foreign),
      };
    });
}
