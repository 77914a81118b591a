/**
 * The reference analytics' units, and svcgw's richer value beside each. A reference field holds
 * what its schema asks for (a number, never null): cost in US cents, rates in percent, latency in
 * whole milliseconds, 0 where there is no data. Its companion, named `<field>_<unit>`, keeps
 * svcgw's own value: `_usd` (dollars), `_fraction` (0 to 1), `_exact` (milliseconds to 3
 * decimals); null in the companion is "no data", which the reference field cannot say.
 */

/** Sums of floating-point costs keep 12 significant digits: no 0.30000000000000004. */
const money = (value: number) => Number(value.toPrecision(12));

/** `{cost: cents, cost_usd: dollars}`; no data is 0 cents and null dollars. */
export function costFields<K extends string>(name: K, usd: number | null) {
  return { [name]: usd === null ? 0 : money(usd * 100), [`${name}_usd`]: usd === null ? null : money(usd) } as Record<
    K | `${K}_usd`,
    number | null
  >;
}

/** `{rate: percent (2 decimals), rate_fraction}`; no data is 0 % and a null fraction. */
export function rateFields<K extends string>(name: K, fraction: number | null) {
  return {
    [name]: fraction === null ? 0 : Number((fraction * 100).toFixed(2)),
    [`${name}_fraction`]: fraction,
  } as Record<K | `${K}_fraction`, number | null>;
}

/** `{avg: whole ms, avg_exact: ms to 3 decimals}`; no data is 0 ms and a null exact value. */
export function latencyFields<K extends string>(name: K, ms: number | null) {
  return { [name]: ms === null ? 0 : Math.round(ms), [`${name}_exact`]: ms } as Record<K | `${K}_exact`, number | null>;
}

/** A figure without a unit of its own (tokens, requests per user, feedback scores): 0 without data. */
export const orZero = (value: number | null): number => value ?? 0;
