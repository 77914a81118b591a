import { z } from 'zod';

/** Feedback recorded on the trace when a guardrail passes or fails (the reference's defaults: +5 / -5, weight 1). */
export interface Feedback {
  value: number;
  weight: number;
  metadata: string;
}

/** What a guardrail does with its verdict (the reference's `GuardrailActions`). */
export interface GuardrailActions {
  /** A failed check stops the request (446) instead of passing it on with the results (246). */
  deny: boolean;
  /** Run off the hot path and only record. */
  async: boolean;
  on_success: { feedback: Feedback };
  on_fail: { feedback: Feedback };
  /** The text a denied request's error carries; from the reference's `{onFail, message}` examples. */
  message?: string;
}

const feedbackInput = z
  .object({
    value: z.number().finite().optional(),
    weight: z.number().finite().min(0).optional(),
    metadata: z.string().max(4096).optional(),
  })
  .strict();

/** `on_success` / `on_fail` as the established gateway writes them. */
export const outcomeInput = z.object({ feedback: feedbackInput.optional() }).strict();

/** The action fields shared by guardrails, config hook objects and inline guardrails. */
export const actionFields = {
  deny: z.boolean().optional(),
  async: z.boolean().optional(),
  on_success: outcomeInput.optional(),
  on_fail: outcomeInput.optional(),
};

/**
 * Actions as the resource takes them: the reference's schema, or the `{onFail: "block",
 * message}` spelling of the reference's own examples (`block` is `deny: true`; `warn`, `log`
 * and `allow` are `deny: false`). Missing fields take the reference's defaults.
 */
export const actionsInput = z
  .object({
    ...actionFields,
    onFail: z.enum(['block', 'warn', 'log', 'allow']).optional(),
    message: z.string().min(1).max(1024).optional(),
  })
  .strict()
  .superRefine((actions, ctx) => {
    if (actions.onFail !== undefined && actions.deny !== undefined && actions.deny !== (actions.onFail === 'block'))
      ctx.addIssue({
        code: 'custom',
        path: ['onFail'],
        message: `onFail "${actions.onFail}" contradicts deny: ${actions.deny}`,
      });
  });

export type ActionsInput = z.infer<typeof actionsInput>;
export type ActionOverrides = Partial<Pick<GuardrailActions, 'deny' | 'async'>> & {
  on_success?: z.infer<typeof outcomeInput>;
  on_fail?: z.infer<typeof outcomeInput>;
};

const feedback = (given: z.infer<typeof outcomeInput> | undefined, value: number): { feedback: Feedback } => ({
  feedback: {
    value: given?.feedback?.value ?? value,
    weight: given?.feedback?.weight ?? 1,
    metadata: given?.feedback?.metadata ?? '',
  },
});

/** Actions with every default filled in. */
export function toActions(input: ActionsInput | ActionOverrides = {}): GuardrailActions {
  const onFail = 'onFail' in input ? input.onFail : undefined;
  const message = 'message' in input ? input.message : undefined;
  return {
    deny: input.deny ?? (onFail !== undefined ? onFail === 'block' : false),
    async: input.async ?? false,
    on_success: feedback(input.on_success, 5),
    on_fail: feedback(input.on_fail, -5),
    ...(message !== undefined ? { message } : {}),
  };
}

/** A stored guardrail's actions with the fields a config's hook object sets in their place. */
export function withOverrides(actions: GuardrailActions, overrides: ActionOverrides): GuardrailActions {
  return {
    ...actions,
    ...(overrides.deny !== undefined ? { deny: overrides.deny } : {}),
    ...(overrides.async !== undefined ? { async: overrides.async } : {}),
    ...(overrides.on_success !== undefined ? { on_success: feedback(overrides.on_success, 5) } : {}),
    ...(overrides.on_fail !== undefined ? { on_fail: feedback(overrides.on_fail, -5) } : {}),
  };
}
