import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateDocs } from '../src/docs/generate.js';

const docsDir = fileURLToPath(new URL('../../docs/', import.meta.url));
for (const [name, content] of Object.entries(await generateDocs())) {
  writeFileSync(`${docsDir}${name}`, content);
  process.stdout.write(`wrote docs/${name}\n`);
}
