import { createRequire } from 'node:module';
import type * as AjvModule from 'ajv';
import type { Ajv, ValidateFunction } from 'ajv';
import type AddFormatsModule from 'ajv-formats';
import { z } from 'zod';
import { defineCheck, notFlag, verdictOf } from '../define-check.js';
import { currentText } from '../text/context-text.js';
import { jsonInText } from '../text/json-in-text.js';

const require = createRequire(import.meta.url);
let ajv: Ajv | undefined;

/**
 * ajv with the ajv-formats formats, loaded when a jsonSchema check's schema is first compiled
 * (saved, or first run), not at start: most servers never run the check (~0.65 MB of heap).
 * Synchronous (both are CommonJS), so validating a guardrail and running the check stay so.
 */
function compiler(): Ajv {
  if (!ajv) {
    const { Ajv: AjvClass } = require('ajv') as typeof AjvModule;
    const addFormats = (require('ajv-formats') as typeof AddFormatsModule).default;
    const instance = new AjvClass({ allErrors: true, strict: false });
    addFormats(instance);
    ajv = instance;
  }
  return ajv;
}

/** ajv compiles a schema into code: compile each schema once and keep the most recent ones. */
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 256;

function validatorFor(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  const hit = compiled.get(key);
  if (hit) return hit;
  const validate = compiler().compile(schema);
  if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  compiled.set(key, validate);
  return validate;
}

/** Passes when the answer carries JSON (see json-in-text.ts) valid against `schema` (draft-07 and 2019 keywords, formats). */
export const jsonSchema = defineCheck({
  id: 'default.jsonSchema',
  hooks: ['afterRequestHook'],
  parameters: z.strictObject({ schema: z.record(z.string(), z.unknown()), not: notFlag }),
  refine: (p) => {
    try {
      validatorFor(p.schema);
      return null;
    } catch (error) {
      return { message: `schema is not a valid JSON Schema: ${(error as Error).message}`, param: 'schema' };
    }
  },
  run(context, p) {
    const json = jsonInText(currentText(context));
    if (!json.found)
      return verdictOf(false, p.not, { whenTrue: '', whenFalse: 'The text holds no JSON.' }, { errors: [] });
    const validate = validatorFor(p.schema);
    const valid = validate(json.value);
    const errors = (validate.errors ?? [])
      .slice(0, 10)
      .map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`.trim());
    return verdictOf(
      valid,
      p.not,
      {
        whenTrue: 'The JSON matches the schema.',
        whenFalse: `The JSON does not match the schema: ${errors.join('; ')}.`,
      },
      { errors },
    );
  },
});
