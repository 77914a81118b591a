import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Runnable examples in the docs (docs/contributing.md, "Docs examples"): a fenced `sh` or `bash`
 * block with the line `<!-- example -->` right before its fence. The test runs the examples of a
 * file in order, as a reader pasting them into one terminal would, against a fresh server.
 */
export interface DocExample {
  /** Path relative to the repository root. */
  file: string;
  /** 1-based line of the opening fence, for messages. */
  line: number;
  code: string;
}

const MARKER = /^<!--\s*example\s*-->\s*$/;
const SHELL_FENCE = /^```(sh|bash|shell)\s*$/;

/** The marked blocks of one Markdown text. A marker not followed by a shell fence is an error. */
export function extractExamples(markdown: string, file: string): DocExample[] {
  const lines = markdown.split('\n');
  const examples: DocExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!MARKER.test(lines[i]!)) continue;
    const fence = lines[i + 1] ?? '';
    if (!SHELL_FENCE.test(fence))
      throw new Error(`${file}:${i + 1}: <!-- example --> must be followed by a \`\`\`sh fence, found ${fence}`);
    const end = lines.findIndex((line, j) => j > i + 1 && line.startsWith('```'));
    if (end === -1) throw new Error(`${file}:${i + 2}: the example's fence is never closed`);
    examples.push({ file, line: i + 2, code: lines.slice(i + 2, end).join('\n') });
    i = end;
  }
  return examples;
}

/** README.md and every Markdown file under docs/, with the examples each holds (files without any left out). */
export function findDocExamples(root: string): { file: string; examples: DocExample[] }[] {
  const files = ['README.md', ...markdownUnder(join(root, 'docs')).map((path) => relative(root, path))];
  return files
    .map((file) => ({ file, examples: extractExamples(readFileSync(join(root, file), 'utf8'), file) }))
    .filter((entry) => entry.examples.length > 0);
}

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) =>
      entry.isDirectory()
        ? markdownUnder(join(dir, entry.name))
        : entry.name.endsWith('.md')
          ? [join(dir, entry.name)]
          : [],
    )
    .sort();
}

/** The address the docs write; examples get the test server's instead. */
export const DOCS_BASE_URL = 'http://127.0.0.1:8787';

export interface ExampleContext {
  baseUrl: string;
  adminKey: string;
  /** `$MOCK_PROVIDER_URL`: an OpenAI-compatible mock, for `x-service-custom-host`. */
  mockProviderUrl: string;
  /** Working directory (files an example writes land here). */
  cwd: string;
  /** File carrying shell variables from one example of a file to the next. */
  statePath: string;
  node: string;
  cli: string;
  timeoutMs?: number;
}

// curl fails on an HTTP error (printing the body), `svcgw` is the built CLI, and any failing
// command fails the example. Variables set by an example are saved for the next one.
const PREAMBLE = `set -euo pipefail
curl() { command curl --fail-with-body "$@"; }
svcgw() { "$DOCS_NODE" "$DOCS_CLI" "$@"; }
__before=" $(compgen -v | tr '\\n' ' ') "
if [ -f "$DOCS_STATE" ]; then source "$DOCS_STATE"; fi
`;
const EPILOGUE = `
for __v in $(compgen -v); do
  case "$__v" in __*|_|BASH*|PIPESTATUS|FUNCNAME|LINENO|RANDOM|SECONDS|REPLY|OPTARG|OPTIND|MAPFILE|COLUMNS|LINES) continue;; esac
  case "$__before" in *" $__v "*) continue;; esac
  declare -p "$__v"
done > "$DOCS_STATE"
`;

export interface ExampleResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one example with bash, the docs' address replaced by the test server's. */
export function runExample(example: DocExample, ctx: ExampleContext): Promise<ExampleResult> {
  const code = example.code.split(DOCS_BASE_URL).join(ctx.baseUrl);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVCGW_') && v !== undefined) env[k] = v;
  Object.assign(env, {
    SVCGW_KEY: ctx.adminKey,
    SVCGW_API_KEY: ctx.adminKey,
    SVCGW_BASE_URL: ctx.baseUrl,
    MOCK_PROVIDER_URL: ctx.mockProviderUrl,
    XDG_CONFIG_HOME: ctx.cwd,
    DOCS_NODE: ctx.node,
    DOCS_CLI: ctx.cli,
    DOCS_STATE: ctx.statePath,
  });
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', PREAMBLE + code + EPILOGUE], {
      cwd: ctx.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${ctx.timeoutMs ?? 30_000} ms)`;
      child.kill('SIGKILL');
    }, ctx.timeoutMs ?? 30_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ code: status, stdout, stderr });
    });
  });
}
