import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateCliDocs } from '../src/cli/docs.js';

const target = fileURLToPath(new URL('../../docs/cli.md', import.meta.url));
writeFileSync(target, generateCliDocs());
process.stdout.write('wrote docs/cli.md\n');
