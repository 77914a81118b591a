import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../src/auth/principal.js';
import { RequestLogDraft } from '../../../src/gateway/request-log-draft.js';
import { plausibleUsage, usageFromBody } from '../../../src/providers/usage.js';

describe("a provider's token counts", () => {
  it('are kept as they are when a request can have used them', () => {
    const usage = usageFromBody({ usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } })!;
    expect(plausibleUsage(usage)).toBe(usage);
  });

  it('are read as not reported when negative, not numbers or past a billion; fractions are rounded', () => {
    const usage = usageFromBody({
      usage: { prompt_tokens: -1_000_000, completion_tokens: 2.6, total_tokens: 1.2e29, seconds: -3 },
    })!;
    expect(plausibleUsage(usage)).toEqual({
      promptTokens: null,
      completionTokens: 3,
      cachedTokens: null,
      totalTokens: null,
      audioSeconds: null,
    });
    expect(plausibleUsage({ ...usage, promptTokens: Number.NaN, audioSeconds: 12.5 }).audioSeconds).toBe(12.5);
  });

  it('reach the request log, its cost and budgets only when plausible', () => {
    const draft = new RequestLogDraft({} as Principal, 'ws', 'chatComplete', 'POST', '/v1/chat/completions', 'r', 0, 0);
    draft.usage = usageFromBody({
      usage: { prompt_tokens: -1_000_000, completion_tokens: -1_000_000, total_tokens: 7 },
    });
    expect(draft.usage).toEqual({ promptTokens: null, completionTokens: null, cachedTokens: null, totalTokens: 7 });
    draft.usage = null;
    expect(draft.usage).toBeNull();
  });
});
