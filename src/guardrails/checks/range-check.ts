import { z } from 'zod';
import { count, defineCheck, notFlag } from '../define-check.js';
import { currentText } from '../text/context-text.js';
import { GUARDRAIL_HOOKS, type CheckDefinition } from '../types.js';
import type { BuiltInCheckId } from '../check-ids.js';

/** A check that passes when a measure of the current text lies within [min, max]. */
export function rangeCheck(
  id: BuiltInCheckId,
  unit: string,
  names: { min: string; max: string },
  defaults: { max: number },
  measure: (text: string) => number,
): CheckDefinition {
  const shape = z.strictObject({
    [names.min]: count(0),
    [names.max]: count(defaults.max),
    not: notFlag,
  });
  return defineCheck({
    id,
    hooks: GUARDRAIL_HOOKS,
    parameters: shape,
    refine: (p) => {
      const min = p[names.min] as number;
      const max = p[names.max] as number;
      return min > max ? { message: `${names.max} must be at least ${names.min} (${min})`, param: names.max } : null;
    },
    run(context, p) {
      const min = p[names.min] as number;
      const max = p[names.max] as number;
      const not = p.not as boolean;
      const n = measure(currentText(context));
      const within = n >= min && n <= max;
      // What verdictOf gives, without building the explanation not taken or copying the data. ASCII
      // only: one non-ASCII character makes V8 keep the whole logged results JSON two bytes a character.
      const explanation = `The text has ${n} ${unit}, ${within ? 'within' : 'outside'} ${min} to ${max}.`;
      return {
        verdict: not ? !within : within,
        explanation: not ? `${explanation} (inverted by not)` : explanation,
        data: rangeData(n, names, min, max, not),
      };
    },
  });
}

/**
 * `{ count, [names.min]: min, [names.max]: max, not }`, in that order, built by assignment: a
 * literal with computed keys takes a runtime call per key on every request.
 */
function rangeData(n: number, names: { min: string; max: string }, min: number, max: number, not: boolean) {
  const data: Record<string, unknown> = { count: n };
  data[names.min] = min;
  data[names.max] = max;
  data.not = not;
  return data;
}
