import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], environment: 'node', sequence: { groupOrder: 0 } } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          // CLI tests start a node process per command; on a busy 2-core machine that is seconds each.
          testTimeout: 90_000,
          hookTimeout: 30_000,
          // Each file starts its own servers on ephemeral ports; two at a time suits a 2-core machine.
          maxWorkers: 2,
          // Projects with different worker settings run one after the other.
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
