import { render } from 'ink-testing-library';
import { createElement } from 'react';
import { describe, expect, it } from 'vitest';
import {
  addToTotals,
  EMPTY_TOTALS,
  formatCost,
  formatTokens,
  guardrailMark,
  statusColour,
  type InFlight,
  type LogRecord,
} from '../../../src/cli/tui/format.js';
import { LogTail, LogTailApp, type LogSource } from '../../../src/cli/tui/LogTail.js';

let n = 0;
function record(overrides: Partial<LogRecord> = {}): LogRecord {
  n++;
  return {
    id: `log-${n}`,
    created_at: new Date(Date.UTC(2026, 0, 31, 12, 0, n)).toISOString(),
    status_code: 200,
    provider: 'openai',
    model: 'gpt-4o-mini',
    prompt_tokens: 12,
    completion_tokens: 30,
    total_tokens: 42,
    cost: 0.00021,
    latency_ms: 312.4,
    ...overrides,
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 30));

describe('LogTail', () => {
  it('fits 80 columns: time and status apart, and an error column', () => {
    const records = [
      record({ created_at: '2026-01-31T12:00:07Z' }),
      record({
        status_code: 400,
        provider: 'no-such-provider-name',
        model: 'a-very-long-model-name-that-cannot-fit',
        error_code: 'UNKNOWN_PROVIDER',
      }),
    ];
    const frame = render(
      createElement(LogTail, { title: 't', records, totals: records.reduce(addToTotals, EMPTY_TOTALS), width: 80 }),
    ).lastFrame()!;
    const lines = frame.split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(frame).toMatch(/TIME\s+STATUS\s+PROVIDER\s+MODEL\s+TOKENS\s+COST\s+LATENCY\s+ERROR/);
    expect(frame).toMatch(/\d\d:\d\d:\d\d 200 /); // never "12:00:07200"
    expect(frame).toMatch(/ 400 +no-such-… +a-very-long-mod… .*UNKNOWN_P…$/m);
    // Wider terminals give the error its full name.
    const wide = render(createElement(LogTail, { title: 't', records, totals: EMPTY_TOTALS, width: 100 })).lastFrame()!;
    expect(wide).toContain('UNKNOWN_PROVIDER');
  });

  it('shows one row per request with status, provider, model, tokens, cost and latency, and a footer of totals', () => {
    const records = [
      record(),
      record({
        status_code: 502,
        provider: 'anthropic',
        model: 'claude-3-5-haiku',
        prompt_tokens: null,
        completion_tokens: null,
        total_tokens: null,
        cost: null,
        latency_ms: 12_500,
      }),
    ];
    const totals = records.reduce(addToTotals, EMPTY_TOTALS);
    const { lastFrame } = render(createElement(LogTail, { title: 'svcgw logs tail · http://gw', records, totals }));
    const frame = lastFrame()!;
    expect(frame).toContain('svcgw logs tail · http://gw');
    expect(frame).toMatch(/TIME\s+STATUS\s+PROVIDER\s+MODEL\s+TOKENS\s+COST\s+LATENCY/);
    expect(frame).toMatch(/200\s+openai\s+gpt-4o-mini\s+12→30\s+\$0\.00021\s+312ms/);
    expect(frame).toMatch(/502\s+anthropic\s+claude-3-5-haiku\s+-\s+-\s+12\.5s/);
    expect(frame).toContain('2 requests · 1 errors · 42 tokens · $0.00021 · avg 6406ms');
    expect(frame).toContain('Ctrl+C to stop');
  });

  it('marks guardrail denials (446) and warnings (246) in words at 80 columns, and counts them', () => {
    const records = [
      record({ status_code: 446, guardrail_verdict: 'denied', error_code: 'HOOKS_DENIED', total_tokens: null }),
      record({ status_code: 246, guardrail_verdict: 'failed' }),
      record({ status_code: 200, guardrail_verdict: 'passed' }),
      // An older server sends no verdict: the status alone says it.
      record({ status_code: 446, error_code: 'HOOKS_DENIED' }),
    ];
    const totals = records.reduce(addToTotals, EMPTY_TOTALS);
    const frame = render(createElement(LogTail, { title: 't', records, totals, width: 80 })).lastFrame()!;
    for (const line of frame.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    const rows = frame.split('\n').filter((line) => /^\d\d:\d\d:\d\d /.test(line));
    expect(rows[0]).toMatch(/ 446 .* DENIED$/);
    expect(rows[1]).toMatch(/ 246 .* GUARD WARN$/);
    expect(rows[2]).toMatch(/ 200 .*ms$/); // a guardrail that passed is no news
    expect(rows[3]).toMatch(/ 446 .* DENIED$/);
    expect(frame).not.toContain('HOOKS_DENIED');
    expect(frame).toContain('4 requests · 2 errors · 2 denied · 1 warned ·');
    // A wider terminal says whose decision it was.
    const wide = render(createElement(LogTail, { title: 't', records, totals, width: 100 })).lastFrame()!;
    expect(wide).toContain('DENIED by guardrail');
    expect(wide).toContain('guardrail warning');
  });

  it('colours a denial red and a warning yellow', () => {
    expect(statusColour(446)).toBe('red');
    expect(statusColour(246)).toBe('yellow');
    expect(statusColour(200)).toBe('green');
    expect(statusColour(404)).toBe('yellow');
    expect(guardrailMark({ status_code: 200, guardrail_verdict: 'passed' })).toBeNull();
    // A guardrail that failed on a request that then failed elsewhere (502) is that failure, not a warning.
    expect(guardrailMark({ status_code: 502, guardrail_verdict: 'failed' })).toBeNull();
  });

  it('waits visibly before the first request, and keeps only the newest rows that fit', () => {
    expect(render(createElement(LogTail, { title: 't', records: [], totals: EMPTY_TOTALS })).lastFrame()).toContain(
      'waiting for requests…',
    );
    const records = Array.from({ length: 6 }, (_, i) => record({ model: `model-${i}` }));
    const frame = render(
      createElement(LogTail, { title: 't', records, totals: records.reduce(addToTotals, EMPTY_TOTALS), maxRows: 3 }),
    ).lastFrame()!;
    expect(frame).not.toContain('model-2');
    expect(frame).toContain('model-3');
    expect(frame).toContain('model-5');
    expect(frame).toContain('6 requests');
  });
});

describe('LogTailApp', () => {
  it('shows requests in flight until their record comes, and the reconnecting line, within 80 columns', async () => {
    let push: { record: (r: LogRecord) => void; status: (s: string | null) => void; start: (s: InFlight) => void };
    const source: LogSource = (record, status, start) => {
      push = { record, status, start: start! };
      return () => undefined;
    };
    const { lastFrame, unmount } = render(createElement(LogTailApp, { title: 'following', source, width: 80 }));
    await tick();
    push!.start({ id: 'slow-1', created_at: '2026-01-31T12:00:01Z', model: 'gpt-4o-slow' });
    await tick();
    let frame = lastFrame()!;
    expect(frame).toMatch(/ … +- +gpt-4o-slow +running/);
    expect(frame).toContain('1 in flight');
    push!.record(record({ id: 'slow-1', model: 'gpt-4o-slow' }));
    await tick();
    frame = lastFrame()!;
    expect(frame).not.toContain('running');
    expect(frame).toMatch(/ 200 +openai +gpt-4o-slow/);
    push!.status('reconnecting… cannot reach the server at http://127.0.0.1:8787 (ECONNREFUSED); next try in 1.0 s');
    await tick();
    frame = lastFrame()!;
    expect(frame).toContain('reconnecting…');
    for (const line of frame.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    push!.status(null);
    await tick();
    expect(lastFrame()).toContain('Ctrl+C to stop');
    unmount();
  });

  it('follows records from its source as they arrive, totals everything seen, and shows why it ended', async () => {
    let push: (r: LogRecord) => void = () => undefined;
    let end: (reason: string) => void = () => undefined;
    let stopped = false;
    const source: LogSource = (onRecord, onEnd) => {
      push = onRecord;
      end = onEnd;
      return () => void (stopped = true);
    };
    const { lastFrame, unmount } = render(createElement(LogTailApp, { title: 'following', source, maxRows: 2 }));
    await tick();
    expect(lastFrame()).toContain('waiting for requests…');

    push(record({ model: 'first-model' }));
    await tick();
    expect(lastFrame()).toContain('first-model');
    expect(lastFrame()).toContain('1 requests · 0 errors · 42 tokens');

    push(record({ model: 'second-model', status_code: 429, cost: 0.5 }));
    push(record({ model: 'third-model' }));
    await tick();
    const frame = lastFrame()!;
    expect(frame).not.toContain('first-model'); // scrolled off
    expect(frame).toMatch(/429\s+openai\s+second-model/);
    expect(frame).toContain('3 requests · 1 errors · 126 tokens');

    end('the server closed the stream');
    await tick();
    expect(lastFrame()).toContain('the server closed the stream');
    unmount();
    expect(stopped).toBe(true);
  });
});

describe('log formatting', () => {
  it('never shows an unknown cost as $0, and falls back to total tokens', () => {
    expect(formatCost(null)).toBe('-');
    expect(formatCost(0)).toBe('$0.0000');
    expect(formatCost(1.23456)).toBe('$1.2346');
    expect(formatTokens({ prompt_tokens: null, completion_tokens: null, total_tokens: 7 })).toBe('7');
  });
});
