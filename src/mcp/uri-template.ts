/**
 * Whether a URI could have been made from an RFC 6570 URI template, as MCP's resource
 * templates are: each expression matches what its operator can expand to (`{var}` one path
 * segment's worth, `{+var}` and `{#var}` anything, `{/var}` path segments, `{?a,b}` and `{&a}`
 * a query part). Used to refuse reading a resource whose template is disabled.
 */
export function templateMatcher(template: string): RegExp {
  let pattern = '';
  let last = 0;
  for (const match of template.matchAll(/\{([+#./;?&]?)([^}]*)\}/g)) {
    pattern += escape(template.slice(last, match.index));
    pattern += EXPANSIONS[match[1] ?? ''] ?? EXPANSIONS['']!;
    last = match.index + match[0].length;
  }
  pattern += escape(template.slice(last));
  return new RegExp(`^${pattern}$`);
}

const EXPANSIONS: Readonly<Record<string, string>> = {
  '': '[^/?#]*',
  '+': '.*',
  '#': '(?:#.*)?',
  '.': '(?:\\.[^/?#]*)*',
  '/': '(?:/[^/?#]*)*',
  ';': '(?:;[^/?#]*)*',
  '?': '(?:\\?[^#]*)?',
  '&': '(?:&[^#]*)*',
};

const escape = (literal: string): string => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
