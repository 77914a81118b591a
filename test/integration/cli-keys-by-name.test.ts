import { describe, expect, it } from 'vitest';
import { cliAgainstServer } from '../helpers/cli.js';

describe('svcgw keys by name, and rotation policies by flags', () => {
  it(
    'addresses a key by its name where unique and sets its rotation policy with flags',
    { timeout: 90_000 },
    async () => {
      const { ok, fails } = await cliAgainstServer();
      const key = await ok(['keys', 'create', '--name', 'deploy', '--workspace', 'default']);
      expect((await ok(['keys', 'get', 'deploy'])).id).toBe(key.id);

      await ok(['keys', 'update', 'deploy', '--rotation-period', 'weekly', '--transition', '1h']);
      expect((await ok(['keys', 'get', key.id])).rotation_policy).toMatchObject({
        rotation_period: 'weekly',
        key_transition_period_ms: 3_600_000,
      });
      // The server's own rule: the transition must be shorter than the period.
      await fails(
        ['keys', 'update', 'deploy', '--rotation-period', 'weekly', '--transition', '7d'],
        1,
        /less than the rotation period/,
      );
      await fails(['keys', 'update', 'deploy', '--no-rotation', '--rotation-period', 'weekly'], 2, /--no-rotation/);
      await ok(['keys', 'update', 'deploy', '--no-rotation']);
      expect((await ok(['keys', 'get', key.id])).rotation_policy).toBeNull();

      await ok(['workspaces', 'create', '--name', 'Team B', '--slug', 'team-b']);
      const other = await ok(['keys', 'create', '--name', 'deploy', '--workspace', 'team-b']);
      const ambiguous = await fails(['keys', 'get', 'deploy'], 2, /2 API keys are named deploy; give one of their ids/);
      expect(ambiguous.stderr).toContain(key.id);
      expect(ambiguous.stderr).toContain(other.id);
      await fails(['keys', 'rotate', 'no-such-key'], 1, /no API key has the id or name no-such-key/);
      expect((await ok(['keys', 'rotate', other.id])).id).toBe(other.id);
    },
  );
});
