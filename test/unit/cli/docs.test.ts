import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateCliDocs } from '../../../src/cli/docs.js';

describe('docs/cli.md', () => {
  it('is generated from the current --help of every command (run `npm run docs:cli` after changing one)', () => {
    expect(readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8'), 'docs/cli.md is stale').toBe(
      generateCliDocs(),
    );
  });

  it('documents every command group with examples', () => {
    const docs = generateCliDocs();
    for (const group of [
      'keys',
      'workspaces',
      'members',
      'users',
      'invites',
      'integrations',
      'providers',
      'virtual-keys',
      'policies rate-limits',
      'policies usage-limits',
      'logs',
      'audit-logs',
      'apply',
      'login',
    ]) {
      expect(docs).toContain(`## svcgw ${group}\n`);
    }
    expect(docs.match(/Examples:/g)!.length).toBeGreaterThan(50);
  });
});
