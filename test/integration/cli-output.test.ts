import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI, REPO_ROOT, cliAgainstServer } from '../helpers/cli.js';

/** Runs the CLI with its stdout read by a reader that stops after the first line, as `| head -1` does. */
function runIntoHead(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; firstLine: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) child.stdout.destroy();
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, firstLine: out.split('\n')[0]!, stderr }));
  });
}

describe('svcgw output into a pipe', () => {
  it('ends quietly with exit 0 when the reader closes after the first line', { timeout: 90_000 }, async () => {
    const { env, api } = await cliAgainstServer();
    // Enough workspaces that the listing is far larger than a pipe's buffer (64 KiB).
    for (let batch = 0; batch < 10; batch++)
      await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          api.post('/v1/workspaces', { name: `Team ${batch}-${i}`, description: 'x'.repeat(200) }),
        ),
      );
    const res = await runIntoHead(['workspaces', 'list', '--page-size', '1000', '--json'], env);
    expect(res.firstLine).toBe('{');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
  });
});
