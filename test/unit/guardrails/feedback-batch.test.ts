import { describe, expect, it, vi } from 'vitest';
import { createFeedbackBatcher, MAX_FEEDBACK_BATCH } from '../../../src/gateway/guardrails/feedback-batch.js';

describe('guardrail feedback batches', () => {
  it('holds rows up to its delay and writes them with one insert', async () => {
    vi.useFakeTimers();
    try {
      const batches: number[][] = [];
      const batcher = createFeedbackBatcher<number>({
        delayMs: 200,
        writeMany: async (rows) => void batches.push(rows),
        writeOne: async () => {
          throw new Error('not expected');
        },
        onError: (error) => {
          throw error;
        },
      });
      for (let i = 0; i < 3; i++) batcher.add(i);
      await vi.advanceTimersByTimeAsync(199);
      expect(batches).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(batches).toEqual([[0, 1, 2]]);
      batcher.add(3);
      await batcher.flush();
      expect(batches).toEqual([[0, 1, 2], [3]]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('writes a full batch without waiting, in chunks', async () => {
    const batches: number[][] = [];
    const batcher = createFeedbackBatcher<number>({
      delayMs: 60_000,
      writeMany: async (rows) => void batches.push(rows),
      writeOne: async () => {
        throw new Error('not expected');
      },
      onError: (error) => {
        throw error;
      },
    });
    for (let i = 0; i < MAX_FEEDBACK_BATCH + 3; i++) batcher.add(i);
    expect(batches.map((b) => b.length)).toEqual([MAX_FEEDBACK_BATCH]);
    await batcher.flush();
    expect(batches.map((b) => b.length)).toEqual([MAX_FEEDBACK_BATCH, 3]);
    expect(batches.flat()).toEqual([...Array(MAX_FEEDBACK_BATCH + 3).keys()]);
  });

  it('writes a refused batch row by row, so that one bad row loses only itself', async () => {
    const written: string[] = [];
    const errors: unknown[] = [];
    const batcher = createFeedbackBatcher<string>({
      delayMs: 0,
      writeMany: async (rows) => {
        if (rows.includes('bad')) throw new Error('refused');
        written.push(...rows);
      },
      writeOne: async (row) => {
        if (row === 'bad') throw new Error('refused');
        written.push(row);
      },
      onError: (error) => errors.push(error),
    });
    for (const row of ['a', 'bad', 'b']) batcher.add(row);
    await batcher.flush();
    expect(written).toEqual(['a', 'b']);
    expect(errors).toHaveLength(1);
  });
});
