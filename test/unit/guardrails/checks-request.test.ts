import { describe, expect, it } from 'vitest';
import { checkParameterProblem, redactCheckParameters } from '../../../src/guardrails/registry.js';
import { answerContext, chatContext, runOne } from './context.js';

describe('metadata checks', () => {
  const withMetadata = (metadata: Record<string, string>) => chatContext('hi', { metadata });

  it('requiredMetadataKeys: all (default), any, none', async () => {
    const context = withMetadata({ team: 'search', env: 'prod' });
    expect((await runOne('default.requiredMetadataKeys', { metadataKeys: ['team', 'user'] }, context)).verdict).toBe(
      false,
    );
    expect(
      (await runOne('default.requiredMetadataKeys', { metadataKeys: ['team', 'user'], operator: 'any' }, context))
        .verdict,
    ).toBe(true);
    expect(
      (await runOne('default.requiredMetadataKeys', { metadataKeys: ['env'], operator: 'none' }, context)).verdict,
    ).toBe(false);
  });

  it('requiredMetadataKeyPairs compares values too', async () => {
    const context = withMetadata({ team: 'search', env: 'prod' });
    const pairs = { team: 'search', env: 'staging' };
    expect(await runOne('default.requiredMetadataKeyPairs', { metadataPairs: pairs }, context)).toMatchObject({
      verdict: false,
      data: { matched: ['team'], unmatched: ['env'] },
    });
    expect(
      (await runOne('default.requiredMetadataKeyPairs', { metadataPairs: pairs, operator: 'any' }, context)).verdict,
    ).toBe(true);
    expect(
      (await runOne('default.requiredMetadataKeyPairs', { metadataPairs: { env: 'prod' }, operator: 'none' }, context))
        .verdict,
    ).toBe(false);
    expect(checkParameterProblem('default.requiredMetadataKeyPairs', { metadataPairs: { team: 1 } })).toMatchObject({
      param: 'metadataPairs.team',
    });
    expect(checkParameterProblem('default.requiredMetadataKeyPairs', { metadataPairs: {} })).toMatchObject({
      param: 'metadataPairs',
    });
  });
});

describe('request checks', () => {
  it('modelWhitelist allows listed models; `not` makes it a blocklist', async () => {
    expect((await runOne('default.modelWhitelist', { models: ['gpt-4o-mini'] }, chatContext('hi'))).verdict).toBe(true);
    expect((await runOne('default.modelWhitelist', { models: ['gpt-4o'] }, chatContext('hi'))).verdict).toBe(false);
    expect(
      (await runOne('default.modelWhitelist', { models: ['gpt-4o-mini'], not: true }, chatContext('hi'))).verdict,
    ).toBe(false);
    expect(checkParameterProblem('default.modelWhitelist', { models: 'gpt-4o' })).toMatchObject({ param: 'models' });
  });

  it('allowedRequestTypes: allowlist, blocklist (which wins), and metadata fallback', async () => {
    const embed = chatContext('hi', { endpoint: 'embed' });
    expect((await runOne('default.allowedRequestTypes', { allowedTypes: ['chatComplete'] }, embed)).verdict).toBe(
      false,
    );
    expect(
      (await runOne('default.allowedRequestTypes', { allowedTypes: ['embed'], blockedTypes: ['embed'] }, embed))
        .verdict,
    ).toBe(false);
    expect((await runOne('default.allowedRequestTypes', { blockedTypes: ['messages'] }, embed)).verdict).toBe(true);
    const viaMetadata = chatContext('hi', {
      endpoint: 'embed',
      metadata: { supported_endpoints: 'chatComplete, complete' },
    });
    expect((await runOne('default.allowedRequestTypes', {}, viaMetadata)).verdict).toBe(false);
    expect(checkParameterProblem('default.allowedRequestTypes', { allowedTypes: ['chat'] })).toMatchObject({
      param: 'allowedTypes.0',
    });
  });

  it('requestParamsCheck: tool types and names, keys, values', async () => {
    const body = {
      model: 'gpt-4o',
      stream: true,
      temperature: 0.2,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', function: { name: 'delete_user', parameters: {} } }, { type: 'web_search_preview' }],
    };
    const context = chatContext('', { request: { json: body, headers: {} } });
    const run = (parameters: unknown) => runOne('default.requestParamsCheck', parameters, context);
    expect((await run({ tools: { blockedTypes: ['web_search_preview'] } })).verdict).toBe(false);
    expect((await run({ tools: { allowedTypes: ['function', 'web_search_preview'] } })).verdict).toBe(true);
    expect((await run({ tools: { blockedFunctionNames: ['delete_user'] } })).data).toMatchObject({
      violations: ['tool "delete_user" is blocked'],
    });
    expect((await run({ tools: { allowedFunctionNames: ['get_weather'] } })).verdict).toBe(false);
    expect((await run({ params: { blockedKeys: ['logprobs'] } })).verdict).toBe(true);
    expect((await run({ params: { allowedKeys: ['model', 'messages'] } })).verdict).toBe(false);
    expect((await run({ params: { values: { stream: { blockedValues: [true] } } } })).verdict).toBe(false);
    expect((await run({ params: { values: { model: { allowedValues: ['gpt-4o', 'gpt-4o-mini'] } } } })).verdict).toBe(
      true,
    );
    expect((await run({ tools: {}, params: {} })).verdict).toBe(true);
    expect(
      checkParameterProblem('default.requestParamsCheck', { params: { values: { model: { allowed: ['x'] } } } }),
    ).toMatchObject({
      param: 'params.values.model.allowed',
    });
  });
});

describe('default.addPrefix', () => {
  it('prefixes the last user message of a chat request, and the provider body changes', async () => {
    const result = await runOne('default.addPrefix', { prefix: 'Be kind. ' }, chatContext('hello'));
    expect(result).toMatchObject({ verdict: true, transformed: true });
    const messages = (result.outcome.request as { messages: { role: string; content: string }[] }).messages;
    expect(messages.at(-1)).toEqual({ role: 'user', content: 'Be kind. hello' });
  });

  it('adds a system message when asked and only when none is there with onlyIfEmpty', async () => {
    const context = chatContext('hello', {
      request: { json: { model: 'm', messages: [{ role: 'user', content: 'hello' }] }, headers: {} },
    });
    const added = await runOne(
      'default.addPrefix',
      { prefix: 'Answer in French.', applyToRole: 'system', onlyIfEmpty: true },
      context,
    );
    expect((added.outcome.request as { messages: unknown[] }).messages[0]).toEqual({
      role: 'system',
      content: 'Answer in French.',
    });
    const kept = await runOne(
      'default.addPrefix',
      { prefix: 'X', applyToRole: 'system', onlyIfEmpty: true },
      chatContext('hello'),
    );
    expect(kept.transformed).toBe(false);
  });

  it('writes Anthropic system prompts and text blocks', async () => {
    const context = chatContext('', {
      endpoint: 'messages',
      request: {
        json: {
          model: 'claude',
          system: 'Be brief.',
          messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
        },
        headers: {},
      },
    });
    const user = await runOne('default.addPrefix', { prefix: '>> ' }, context);
    expect(user.outcome.request).toMatchObject({ messages: [{ content: [{ type: 'text', text: '>> hi' }] }] });
    const system = await runOne('default.addPrefix', { prefix: 'Rule: ', applyToRole: 'system' }, context);
    expect(system.outcome.request).toMatchObject({ system: 'Rule: Be brief.' });
  });

  it('requires a prefix', () => {
    expect(checkParameterProblem('default.addPrefix', {})).toMatchObject({ param: 'prefix' });
    expect(checkParameterProblem('default.addPrefix', { prefix: 'x', applyToRole: 'tool' })).toMatchObject({
      param: 'applyToRole',
    });
  });
});

describe('default.pii', () => {
  const text =
    'Mail jane.doe@example.com or call +44 20 7946 0958. Card 4111 1111 1111 1111, IBAN GB82 WEST 1234 5698 7654 32, SSN 078-05-1120, from 203.0.113.9 and 2001:db8::1.';

  it('finds every category and fails without redact', async () => {
    const result = await runOne('default.pii', {}, chatContext(text));
    expect(result.verdict).toBe(false);
    expect(result.data).toEqual({
      found: { EMAIL_ADDRESS: 1, PHONE_NUMBER: 1, CREDIT_CARD: 1, IBAN: 1, SSN: 1, IP_ADDRESS: 2 },
      redacted: false,
    });
    expect(JSON.stringify(result.outcome.results)).not.toContain('jane.doe');
  });

  it('ignores numbers that fail their checksum and ordinary numbers', async () => {
    const clean =
      'Order 4111 1111 1111 1112, IBAN GB82 WEST 1234 5698 7654 33, version 10.2, on 2026-01-15, 1200 users.';
    expect((await runOne('default.pii', {}, chatContext(clean))).verdict).toBe(true);
  });

  it('redacts in the request so the provider gets placeholders, and passes', async () => {
    const result = await runOne(
      'default.pii',
      { redact: true, categories: ['EMAIL_ADDRESS', 'CREDIT_CARD'] },
      chatContext(text),
    );
    expect(result).toMatchObject({
      verdict: true,
      transformed: true,
      data: { redacted: true, found: { EMAIL_ADDRESS: 1, CREDIT_CARD: 1 } },
    });
    const sent = JSON.stringify(result.outcome.request);
    expect(sent).toContain('Mail [REDACTED_EMAIL_ADDRESS] or call +44 20 7946 0958. Card [REDACTED_CREDIT_CARD],');
  });

  it('redacts answers; a streamed answer can only be judged', async () => {
    const answer = await runOne('default.pii', { redact: true }, answerContext('Write to a@b.io'));
    expect(JSON.stringify(answer.outcome.response)).toContain('Write to [REDACTED_EMAIL_ADDRESS]');
    const streamed = await runOne(
      'vendor.pii',
      { redact: true },
      answerContext('', { response: { streamText: 'Write to a@b.io' } }),
    );
    expect(streamed).toMatchObject({ verdict: false, transformed: false });
  });

  it('names the categories it cannot detect', () => {
    expect(checkParameterProblem('vendor.pii', { categories: ['EMAIL_ADDRESS', 'NAME'] })).toMatchObject({
      param: 'categories.1',
      message: expect.stringMatching(/language model/),
    });
  });
});

describe('redactCheckParameters', () => {
  it('hides webhook headers and vendor keys, keeps the rest', () => {
    expect(
      redactCheckParameters('default.webhook', {
        webhookURL: 'https://x.example',
        headers: { Authorization: 'Bearer t0k' },
      }),
    ).toEqual({ webhookURL: 'https://x.example', headers: { Authorization: '[REDACTED]' } });
    expect(
      redactCheckParameters('default.thirdPartyDetection', { policyId: 'p', url: 'https://v.example', apiKey: 'k' }),
    ).toEqual({
      policyId: 'p',
      url: 'https://v.example',
      apiKey: '[REDACTED]',
    });
    expect(redactCheckParameters('default.regexMatch', { rule: 'a' })).toEqual({ rule: 'a' });
  });
});
