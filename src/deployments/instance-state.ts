import type { DeploymentInstanceRow } from '../storage/repositories/deployments.js';

/** An instance silent for this many of its own heartbeat intervals is shown `gone`. */
export const STALE_AFTER_HEARTBEATS = 3;
/** Instances silent this long (gone, stopped or refused) are pruned and no longer listed. */
export const INSTANCE_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * What an instance looks like to whoever reads it now: `active` while its heartbeat is fresh,
 * `gone` once it has missed several (crashed, cut off, paused), `stopped` after a clean
 * shutdown, `refused` when its registration was turned down.
 */
export type InstanceState = 'active' | 'gone' | 'stopped' | 'refused';

export function instanceState(row: DeploymentInstanceRow, now: number): InstanceState {
  if (row.status !== 'active') return row.status;
  const silentFor = now - Date.parse(row.last_heartbeat_at);
  return silentFor > STALE_AFTER_HEARTBEATS * row.heartbeat_interval_ms ? 'gone' : 'active';
}

export const isLive = (row: DeploymentInstanceRow, now: number): boolean => instanceState(row, now) === 'active';
