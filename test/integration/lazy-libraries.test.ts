import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runNode } from '../helpers/cli.js';

const BUILD_APP = fileURLToPath(new URL('../../dist/src/server/build-app.js', import.meta.url));

/**
 * A child `node` that imports the built server (as `svcgw serve` does) and prints every module
 * of ajv, ajv-formats and jose it loaded: the ESM ones through a load hook, the CommonJS ones
 * from the require cache.
 */
const CHILD = `
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';
const PATTERN = /node_modules\\/(ajv|ajv-formats|jose)\\//;
const { port1, port2 } = new MessageChannel();
const seen = [];
port1.on('message', (url) => seen.push(url));
port1.unref();
register('data:text/javascript,' + encodeURIComponent(\`
  let port;
  export function initialize(data) { port = data.port; }
  export async function load(url, context, next) {
    if (\${PATTERN}.test(url)) port.postMessage(url);
    return next(url, context);
  }\`), { data: { port: port2 }, transferList: [port2] });
await import(pathToFileURL(process.argv[1]).href);
await new Promise((resolve) => setTimeout(resolve, 50));
const cjs = Object.keys(createRequire(import.meta.url).cache).filter((p) => PATTERN.test(p));
process.stdout.write(JSON.stringify([...seen, ...cjs]));
`;

async function loadedByImport(): Promise<string[]> {
  const { code, stdout, stderr } = await runNode(['--input-type=module', '-e', CHILD, BUILD_APP]);
  if (code !== 0) throw new Error(`exit ${code}: ${stderr}`);
  return JSON.parse(stdout) as string[];
}

describe('libraries loaded on first use', () => {
  it('the server loads neither ajv (jsonSchema check) nor jose (jwt check, JWT authentication) at start', async () => {
    expect(await loadedByImport()).toEqual([]);
  });
});
