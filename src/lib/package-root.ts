import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The directory of svcgw's package.json, found by walking up from this file, so that shipped
 * files (config/pricing, package.json) are found both from src/ (tests) and from dist/src/.
 */
export const PACKAGE_ROOT: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate) && (JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string }).name === 'svcgw')
      return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the svcgw package root');
    dir = parent;
  }
})();
