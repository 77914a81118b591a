/**
 * Refuses a change of switches (MCP capabilities, agent skills) that names an item the last sync
 * did not find: `refuse` makes the error for the first such change, at its index.
 */
export function assertKnown<C>(
  changes: readonly C[],
  known: ReadonlySet<string>,
  keyOf: (change: C) => string,
  refuse: (change: C, index: number) => Error,
): void {
  changes.forEach((change, i) => {
    if (!known.has(keyOf(change))) throw refuse(change, i);
  });
}
