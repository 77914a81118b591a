/**
 * Whether the operator gave `node` one of these V8 flags, on the command line or in
 * NODE_OPTIONS (`-` and `_` are the same to V8): svcgw then leaves that setting alone.
 */
export function nodeFlagGiven(
  names: readonly string[],
  execArgv: readonly string[],
  nodeOptions: string | undefined,
): boolean {
  const patterns = names.map((name) => new RegExp(`^--${name.replace(/[-_]/g, '[-_]')}(=|$)`));
  return [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((arg) => patterns.some((p) => p.test(arg)));
}
