import { z } from 'zod';
import { defineCheck } from '../define-check.js';

const names = z.array(z.string().min(1)).optional();
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

const parameters = z.strictObject({
  tools: z
    .strictObject({
      blockedTypes: names,
      allowedTypes: names,
      blockedFunctionNames: names,
      allowedFunctionNames: names,
    })
    .optional(),
  params: z
    .strictObject({
      blockedKeys: names,
      allowedKeys: names,
      values: z
        .record(
          z.string().min(1),
          z.strictObject({ blockedValues: z.array(scalar).optional(), allowedValues: z.array(scalar).optional() }),
        )
        .optional(),
    })
    .optional(),
});

type Obj = Record<string, unknown>;
const isObj = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);
const some = (list: readonly string[] | undefined): list is readonly string[] => list !== undefined && list.length > 0;
const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

/**
 * Allow and block rules on the request body: its tools (`tools[].type`, and the name in
 * `tools[].function.name` or `tools[].name`; a tool without a type counts as "function"), its
 * top-level keys, and the values of named keys. An empty or absent list is no rule. Every
 * violation is listed in `data.violations`.
 */
export const requestParamsCheck = defineCheck({
  id: 'default.requestParamsCheck',
  hooks: ['beforeRequestHook'],
  parameters,
  run(context, p) {
    const body = isObj(context.request.json) ? context.request.json : {};
    const violations: string[] = [];
    const tools = Array.isArray(body.tools) ? body.tools.filter(isObj) : [];
    for (const tool of tools) {
      const type = typeof tool.type === 'string' ? tool.type : 'function';
      const fn = isObj(tool.function) ? tool.function : undefined;
      const name = typeof fn?.name === 'string' ? fn.name : typeof tool.name === 'string' ? tool.name : undefined;
      const rules = p.tools;
      if (some(rules?.blockedTypes) && rules.blockedTypes.includes(type))
        violations.push(`tool type "${type}" is blocked`);
      if (some(rules?.allowedTypes) && !rules.allowedTypes.includes(type))
        violations.push(`tool type "${type}" is not allowed`);
      if (name !== undefined && some(rules?.blockedFunctionNames) && rules.blockedFunctionNames.includes(name))
        violations.push(`tool "${name}" is blocked`);
      if (some(rules?.allowedFunctionNames) && (name === undefined || !rules.allowedFunctionNames.includes(name)))
        violations.push(`tool "${name ?? `(a ${type} tool)`}" is not allowed`);
    }
    const keys = Object.keys(body);
    const rules = p.params;
    for (const key of keys) {
      if (some(rules?.blockedKeys) && rules.blockedKeys.includes(key)) violations.push(`parameter "${key}" is blocked`);
      if (some(rules?.allowedKeys) && !rules.allowedKeys.includes(key))
        violations.push(`parameter "${key}" is not allowed`);
    }
    for (const [key, rule] of Object.entries(rules?.values ?? {})) {
      if (!Object.hasOwn(body, key)) continue;
      const value = body[key];
      const shown = JSON.stringify(value)?.slice(0, 100) ?? 'undefined';
      if (rule.blockedValues?.some((v) => same(v, value))) violations.push(`${key}=${shown} is blocked`);
      if (rule.allowedValues && rule.allowedValues.length > 0 && !rule.allowedValues.some((v) => same(v, value)))
        violations.push(`${key}=${shown} is not allowed`);
    }
    return violations.length === 0
      ? { verdict: true, explanation: 'The request follows the parameter rules.', data: { violations } }
      : {
          verdict: false,
          explanation: `The request breaks the parameter rules: ${violations.join('; ')}.`,
          data: { violations },
        };
  },
});
