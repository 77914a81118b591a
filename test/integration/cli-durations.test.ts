import { describe, expect, it } from 'vitest';
import { cliAgainstServer } from '../helpers/cli.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('svcgw durations', () => {
  it(
    'takes 30m, 1h, 7d for times and periods: --since, --until, --expires-at, --transition',
    { timeout: 90_000 },
    async () => {
      const { ok, fails } = await cliAgainstServer();
      const before = Date.now();
      const key = await ok(['keys', 'create', '--name', 'ci', '--workspace', 'default', '--expires-at', '30d']);
      const expires = Date.parse((await ok(['keys', 'get', key.id])).expires_at);
      expect(expires).toBeGreaterThanOrEqual(before + 30 * DAY - 60_000);
      expect(expires).toBeLessThanOrEqual(Date.now() + 30 * DAY + 60_000);

      // The key was created within the last hour, and not before an hour ago.
      const recent = await ok(['audit-logs', 'list', '--since', '1h', '--resource-type', 'api_key']);
      expect(recent.data.map((r: { resource_id: string }) => r.resource_id)).toContain(key.id);
      expect((await ok(['audit-logs', 'list', '--until', '1h', '--resource-type', 'api_key'])).data).toEqual([]);

      const rotated = await ok(['keys', 'rotate', key.id, '--transition', '1h']);
      const transitionEnds = Date.parse(rotated.key_transition_expires_at);
      expect(transitionEnds).toBeGreaterThanOrEqual(before + HOUR - 60_000);
      expect(transitionEnds).toBeLessThanOrEqual(Date.now() + HOUR + 60_000);

      await fails(['logs', 'list', '--since', '7'], 2, /30m, 1h or 7d \(that long ago\) or an ISO 8601/);
      await fails(['keys', 'rotate', key.id, '--transition', '1 hour'], 2, /a duration such as/);
    },
  );
});
