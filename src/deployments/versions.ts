/** svcgw versions are `major.minor.patch`; anything after the patch (a pre-release tag) sorts before the release. */
function parts(version: string): [number, number, number, boolean] {
  const match = /^(\d+)\.(\d+)\.(\d+)(.*)$/.exec(version.trim());
  if (!match) return [0, 0, 0, true];
  return [Number(match[1]), Number(match[2]), Number(match[3]), match[4] !== ''];
}

/** Negative when `a` is older than `b`, zero when equal, positive when newer. */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return Number(y[3]) - Number(x[3]);
}

export const isOlderThan = (version: string, minimum: string): boolean => compareVersions(version, minimum) < 0;
