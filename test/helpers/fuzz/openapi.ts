/**
 * The served OpenAPI document, reduced to what the fuzz suite needs: every operation with its
 * path and query parameters and its JSON body schema. The document is OpenAPI 3.0 generated
 * from the routes' zod schemas (no $ref, `nullable`, boolean `exclusiveMinimum`).
 */

/** The JSON-schema keywords the generated document uses. */
export interface JsonSchema {
  type?: 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object' | 'null';
  nullable?: boolean;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  method: string;
  /** The OpenAPI path, e.g. `/v1/configs/{slug}`. */
  path: string;
  pathParams: Parameter[];
  queryParams: Parameter[];
  /** The JSON body schema, when the operation declares one. */
  body: JsonSchema | null;
  bodyRequired: boolean;
  /** A data-plane route (tag `Gateway`): provider answers, no admin rules. */
  gateway: boolean;
  /** Name used in reports: `PUT /v1/configs/{slug}`. */
  id: string;
}

interface RawOperation {
  tags?: string[];
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: JsonSchema }>;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
}

export function operationsOf(document: { paths: Record<string, Record<string, RawOperation>> }): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, raw] of Object.entries(methods)) {
      const params = (raw.parameters ?? []).map((p) => ({
        name: p.name,
        in: p.in as Parameter['in'],
        required: p.required ?? false,
        schema: p.schema ?? {},
      }));
      const body = raw.requestBody?.content?.['application/json']?.schema ?? null;
      operations.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path'),
        queryParams: params.filter((p) => p.in === 'query'),
        body,
        bodyRequired: raw.requestBody?.required ?? false,
        gateway: (raw.tags ?? []).includes('Gateway'),
        id: `${method.toUpperCase()} ${path}`,
      });
    }
  }
  return operations;
}

/** Reads the document the running server serves (not the copy in docs/). */
export async function loadServedOperations(baseUrl: string): Promise<Operation[]> {
  const response = await fetch(`${baseUrl}/v1/openapi.json`);
  if (response.status !== 200) throw new Error(`GET /v1/openapi.json answered ${response.status}`);
  return operationsOf((await response.json()) as { paths: Record<string, Record<string, RawOperation>> });
}
