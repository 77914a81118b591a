import { windowAt } from './windows.js';

export interface ResetSchedule {
  periodic_reset?: 'weekly' | 'monthly' | null | undefined;
  periodic_reset_days?: number | null | undefined;
}

const DAY = 24 * 60 * 60 * 1000;

/** Whether the budget resets at all; without a schedule a usage limit is cumulative. */
export const hasSchedule = (schedule: ResetSchedule): boolean =>
  Boolean(schedule.periodic_reset || schedule.periodic_reset_days);

/**
 * The first reset strictly after `from`: weekly on Monday 00:00 UTC, monthly on the 1st at
 * 00:00 UTC, or every N days counted from `from` (the previous reset, or creation).
 */
export function nextResetAfter(from: number, schedule: ResetSchedule): number | null {
  if (schedule.periodic_reset === 'weekly') return windowAt('rpw', from).end;
  if (schedule.periodic_reset === 'monthly') {
    const date = new Date(from);
    return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  }
  if (schedule.periodic_reset_days) return from + schedule.periodic_reset_days * DAY;
  return null;
}

/** The start of the current budget period: the last reset, else when the limit was created. */
export const periodStart = (limit: { last_reset_at: string | null; created_at: string }): string =>
  limit.last_reset_at ?? limit.created_at;
