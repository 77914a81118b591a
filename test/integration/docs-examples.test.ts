import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CLI, REPO_ROOT } from '../helpers/cli.js';
import { extractExamples, findDocExamples, runExample, type ExampleContext } from '../helpers/docs-examples.js';
import { startMockOpenAI } from '../helpers/mock-openai-upstream.js';
import { makeTempDir, startTestServer } from '../helpers/start-test-server.js';

/**
 * The runnable examples of the docs (`<!-- example -->` before a ```sh fence) run against a
 * real server, so that a doc cannot drift from what svcgw does: each file's examples in order,
 * on one fresh server with a mock OpenAI provider at $MOCK_PROVIDER_URL; every command must
 * succeed (curl with --fail-with-body, so an HTTP error fails the example).
 */
const docs = findDocExamples(REPO_ROOT);

async function freshContext(): Promise<ExampleContext> {
  const server = await startTestServer();
  const mock = await startMockOpenAI();
  onTestFinished(() => mock.close());
  const cwd = makeTempDir('svcgw-docs-');
  return {
    baseUrl: server.baseUrl,
    adminKey: server.adminKey,
    mockProviderUrl: mock.baseUrl,
    cwd,
    statePath: join(cwd, '.example-state'),
    node: process.execPath,
    cli: CLI,
  };
}

describe('docs examples', () => {
  it('are marked in enough places to matter', () => {
    const count = docs.reduce((sum, entry) => sum + entry.examples.length, 0);
    expect(count).toBeGreaterThanOrEqual(15);
    expect(docs.length).toBeGreaterThanOrEqual(4);
    expect(docs.map((entry) => entry.file)).toContain('README.md');
  });

  it('refuses a marker that is not followed by a shell fence, so a mistyped example is not skipped', () => {
    expect(() => extractExamples('text\n<!-- example -->\n```json\n{}\n```\n', 'x.md')).toThrow(/x\.md:2/);
    expect(extractExamples('<!-- example -->\n```sh\necho hi\n```\n```sh\nnot marked\n```\n', 'y.md')).toEqual([
      { file: 'y.md', line: 2, code: 'echo hi' },
    ]);
  });

  it('fail when a command fails or the server answers an error, and carry variables to the next example', async () => {
    const ctx = await freshContext();
    const notFound = await runExample(
      { file: 't.md', line: 1, code: 'curl -s -H "x-service-api-key: $SVCGW_KEY" $SVCGW_BASE_URL/v1/configs/none' },
      ctx,
    );
    expect(notFound.code).not.toBe(0);
    expect(notFound.stdout).toContain('NOT_FOUND');
    const badCli = await runExample({ file: 't.md', line: 1, code: 'svcgw workspaces get no-such-workspace' }, ctx);
    expect(badCli.code).not.toBe(0);

    const set = await runExample(
      { file: 't.md', line: 1, code: 'ID=$(curl -s http://127.0.0.1:8787/v1/health | jq -r .status)' },
      ctx,
    );
    expect(set.code, set.stderr).toBe(0);
    const read = await runExample({ file: 't.md', line: 2, code: 'echo "id=$ID"' }, ctx);
    expect(read.stdout.trim()).toMatch(/^id=.+/);
  });

  for (const { file, examples } of docs) {
    it(`${file}: ${examples.length} example(s) run in order`, { timeout: 120_000 }, async () => {
      const ctx = await freshContext();
      for (const example of examples) {
        const result = await runExample(example, ctx);
        expect(
          result.code,
          `${example.file}:${example.line} failed\n${example.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`,
        ).toBe(0);
      }
    });
  }
});
