import { sql } from 'kysely';
import { setImmediate as yieldToRequests } from 'node:timers/promises';
import type { Db } from '../../../storage/database.js';

export const DAY_MS = 24 * 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;
/** A day is rolled up once it has been over this long: records are written in batches, a little late. */
export const ROLLUP_GRACE_MS = HOUR_MS;
const STATE_KEY = 'daily_rollup_through';

export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const dayStart = (day: string): number => Date.parse(`${day}T00:00:00.000Z`);
const iso = (ms: number) => new Date(ms).toISOString();

const statusClass = sql<string>`case when status_code < 200 then '1xx' when status_code < 300 then '2xx' when status_code < 400 then '3xx' when status_code < 500 then '4xx' else '5xx' end`;

interface DailyRow {
  day: string;
  organisation_id: string;
  workspace_id: string;
  provider: string;
  model: string;
  status_class: string;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost: number;
  latency_ms_sum: number;
  cache_hits: number;
}

/** The last day whose roll-up is complete, or null before the first. */
export async function rolledUpThrough(db: Db): Promise<string | null> {
  return (await db.selectFrom('observability_state').select('value').where('name', '=', STATE_KEY).executeTakeFirst())?.value ?? null;
}

/** One organisation's requests of one hour, summed per workspace × provider × model × status class. */
function sumHour(db: Db, organisationId: string, from: number) {
  return db
    .selectFrom('request_logs')
    .where('organisation_id', '=', organisationId)
    .where('created_at', '>=', iso(from))
    .where('created_at', '<', iso(from + HOUR_MS))
    .select([
      'workspace_id',
      sql<string>`coalesce(provider, '')`.as('provider'),
      sql<string>`coalesce(model, '')`.as('model'),
      statusClass.as('status_class'),
      sql<number>`count(*)`.as('requests'),
      sql<number>`sum(case when is_success = 0 then 1 else 0 end)`.as('errors'),
      sql<number>`coalesce(sum(prompt_tokens), 0)`.as('prompt_tokens'),
      sql<number>`coalesce(sum(completion_tokens), 0)`.as('completion_tokens'),
      sql<number>`coalesce(sum(total_tokens), 0)`.as('total_tokens'),
      sql<number>`coalesce(sum(cost), 0)`.as('cost'),
      sql<number>`coalesce(sum(latency_ms), 0)`.as('latency_ms_sum'),
      sql<number>`sum(case when cache_status like '%HIT%' then 1 else 0 end)`.as('cache_hits'),
    ])
    .groupBy(['workspace_id', 'provider', 'model', 'status_class'])
    .execute();
}

/** Rolls up one day, hour by hour with a yield between hours, then replaces that day's rows. */
async function rollUpDay(db: Db, day: string, organisationIds: readonly string[]): Promise<number> {
  const rows = new Map<string, DailyRow>();
  for (const organisationId of organisationIds) {
    for (let hour = dayStart(day); hour < dayStart(day) + DAY_MS; hour += HOUR_MS) {
      for (const r of await sumHour(db, organisationId, hour)) {
        const key = [organisationId, r.workspace_id, r.provider, r.model, r.status_class].join('\u0000');
        const acc = rows.get(key) ?? { day, organisation_id: organisationId, workspace_id: r.workspace_id, provider: r.provider, model: r.model, status_class: r.status_class, requests: 0, errors: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0, latency_ms_sum: 0, cache_hits: 0 };
        acc.requests += Number(r.requests);
        acc.errors += Number(r.errors);
        acc.prompt_tokens += Number(r.prompt_tokens);
        acc.completion_tokens += Number(r.completion_tokens);
        acc.total_tokens += Number(r.total_tokens);
        acc.cost += Number(r.cost);
        acc.latency_ms_sum += Number(r.latency_ms_sum);
        acc.cache_hits += Number(r.cache_hits);
        rows.set(key, acc);
      }
      await yieldToRequests();
    }
  }
  // Replacing (not adding to) the day's rows makes a repeated roll-up harmless.
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('request_log_daily').where('day', '=', day).execute();
    const values = [...rows.values()];
    for (let i = 0; i < values.length; i += 200) await trx.insertInto('request_log_daily').values(values.slice(i, i + 200)).execute();
    await markThrough(trx, day);
  });
  return rows.size;
}

/**
 * Brings `request_log_daily` up to the last complete day (over for ROLLUP_GRACE_MS). It starts
 * after the last day rolled up, or on the day of the oldest log on the first run. Returns the
 * days rolled up.
 */
export async function rollUpCompleteDays(db: Db, nowMs: number): Promise<string[]> {
  const lastComplete = dayOf(nowMs - ROLLUP_GRACE_MS - DAY_MS);
  const through = await rolledUpThrough(db);
  let first: string;
  if (through !== null) {
    first = dayOf(dayStart(through) + DAY_MS);
  } else {
    const oldest = await db.selectFrom('request_logs').select((eb) => eb.fn.min('created_at').as('at')).executeTakeFirst();
    if (!oldest?.at) return [];
    first = String(oldest.at).slice(0, 10);
  }
  const organisationIds = (await db.selectFrom('organisations').select('id').execute()).map((o) => o.id);
  const days: string[] = [];
  for (let day = first; day <= lastComplete; day = dayOf(dayStart(day) + DAY_MS)) {
    const next = await nextLogDay(db, organisationIds, day);
    if (next === null || next > lastComplete) {
      // No log in the days left: they are complete, and empty.
      await markThrough(db, lastComplete);
      break;
    }
    if (next > day) {
      await markThrough(db, dayOf(dayStart(next) - DAY_MS));
      day = next;
    }
    await rollUpDay(db, day, organisationIds);
    days.push(day);
  }
  return days;
}

/** The first day on or after `day` with a log, through the (organisation_id, created_at) index. */
async function nextLogDay(db: Db, organisationIds: readonly string[], day: string): Promise<string | null> {
  let next: string | null = null;
  for (const organisationId of organisationIds) {
    const row = await db.selectFrom('request_logs').select((eb) => eb.fn.min('created_at').as('at')).where('organisation_id', '=', organisationId).where('created_at', '>=', iso(dayStart(day))).executeTakeFirst();
    const at = row?.at ? String(row.at).slice(0, 10) : null;
    if (at !== null && (next === null || at < next)) next = at;
  }
  return next;
}

async function markThrough(db: Pick<Db, 'insertInto'>, day: string): Promise<void> {
  await db.insertInto('observability_state').values({ name: STATE_KEY, value: day }).onConflict((oc) => oc.column('name').doUpdateSet({ value: day })).execute();
}
