import { parseArgs } from 'node:util';
import { startMockOpenAI } from '../test/helpers/mock-openai-upstream.js';

/**
 * The mock OpenAI provider as its own process, for the benchmark: the gateway under load and
 * the provider it calls must not share one event loop. Prints `{"url":"http://127.0.0.1:N"}`
 * on one line once listening, then serves until SIGTERM or SIGINT.
 *
 *   node dist/scripts/mock-provider.js --port 0 [--stream-chunks 5] [--chunk-delay-ms 0] [--delay-ms 0]
 */
const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'stream-chunks': { type: 'string', default: '5' },
    'chunk-delay-ms': { type: 'string', default: '0' },
    'delay-ms': { type: 'string', default: '0' },
  },
});

function count(name: keyof typeof values): number {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < 0) {
    process.stderr.write(`mock-provider: --${name} must be a whole number, got ${String(values[name])}\n`);
    process.exit(2);
  }
  return value;
}

const mock = await startMockOpenAI({
  record: false,
  port: count('port'),
  streamChunks: Math.max(1, count('stream-chunks')),
  chunkDelayMs: count('chunk-delay-ms'),
});
const delayMs = count('delay-ms');
if (delayMs > 0) mock.behave({ kind: 'delay', ms: delayMs });
process.stdout.write(`${JSON.stringify({ url: mock.url })}\n`);

const stop = () => {
  void mock.close().then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
