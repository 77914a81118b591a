/** The per-user overrides of a change, as the repositories take them (`null` removes one, where allowed). */
export const userOverrides = <T extends boolean | null>(
  entries: ReadonlyArray<{ user_id: string; enabled: T }>,
): Array<{ userId: string; enabled: T }> => entries.map((entry) => ({ userId: entry.user_id, enabled: entry.enabled }));

/** Whether a user may call a server: their own override when they have one, else the server's default. */
export const userAllowed = (override: number | null, defaultAccess: 'allow' | 'deny'): boolean =>
  override === null ? defaultAccess === 'allow' : override === 1;
