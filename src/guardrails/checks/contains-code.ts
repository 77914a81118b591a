import { z } from 'zod';
import { defineCheck, notFlag, verdictOf } from '../define-check.js';
import { currentText } from '../text/context-text.js';
import { GUARDRAIL_HOOKS } from '../types.js';

/** The reference's formats and the info strings of fenced code blocks (```py) that name them. */
const FENCE_TAGS = {
  SQL: ['sql', 'mysql', 'postgresql', 'postgres', 'sqlite', 'plsql', 'tsql'],
  Python: ['python', 'py', 'python3'],
  TypeScript: ['typescript', 'ts', 'tsx'],
  JavaScript: ['javascript', 'js', 'jsx', 'mjs', 'cjs', 'node'],
  Java: ['java'],
  'C#': ['csharp', 'cs', 'c#'],
  'C++': ['cpp', 'c++', 'cxx', 'hpp'],
  C: ['c', 'h'],
  Ruby: ['ruby', 'rb'],
  PHP: ['php'],
  Swift: ['swift'],
  Kotlin: ['kotlin', 'kt', 'kts'],
  Go: ['go', 'golang'],
  Rust: ['rust', 'rs'],
  Scala: ['scala'],
  R: ['r'],
  Perl: ['perl', 'pl'],
  Shell: ['shell', 'sh', 'bash', 'zsh', 'console', 'shellscript'],
  HTML: ['html', 'htm', 'xhtml'],
  CSS: ['css', 'scss', 'less'],
  XML: ['xml', 'xsd', 'xsl'],
  JSON: ['json', 'jsonc', 'json5'],
  YAML: ['yaml', 'yml'],
  Markdown: ['markdown', 'md'],
  Dockerfile: ['dockerfile', 'docker'],
} as const satisfies Record<string, readonly string[]>;

type Format = keyof typeof FENCE_TAGS;
const FORMATS = Object.keys(FENCE_TAGS) as [Format, ...Format[]];

/** Info strings of the fenced code blocks of a Markdown text, lower-cased. */
export function fenceLanguages(text: string): string[] {
  return [...text.matchAll(/^ {0,3}(?:```|~~~)[ \t]*([^\s`{]+)/gm)].map((m) => m[1]!.toLowerCase());
}

/**
 * Passes when the text holds a fenced code block (```lang) in `format`. Code outside fences
 * is not recognised: guessing languages from bare text would be wrong too often to block on.
 */
export const containsCode = defineCheck({
  id: 'default.containsCode',
  hooks: GUARDRAIL_HOOKS,
  parameters: z.strictObject({ format: z.enum(FORMATS), not: notFlag }),
  run(context, p) {
    const tags: readonly string[] = FENCE_TAGS[p.format];
    const languages = fenceLanguages(currentText(context));
    const found = languages.some((language) => tags.includes(language));
    return verdictOf(
      found,
      p.not,
      { whenTrue: `The text contains ${p.format} code.`, whenFalse: `The text contains no ${p.format} code.` },
      { format: p.format, languages },
    );
  },
});
