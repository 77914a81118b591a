/** Answers whether a URI matches a template; see templateMatcher. */
export interface TemplateMatcher {
  test(uri: string): boolean;
}

/**
 * Whether a URI could have been made from an RFC 6570 URI template, as MCP's resource
 * templates are: each expression matches what its operator can expand to (`{var}` one path
 * segment's worth, `{+var}` and `{#var}` anything, `{/var}` path segments, `{?a,b}` and `{&a}`
 * a query part). Used to refuse reading a resource whose template is disabled.
 *
 * The URI is read once, following every way through the template at the same time (a Thompson
 * automaton): time linear in the URI's length times the template's, whatever the URI. A
 * backtracking regular expression of the same pieces took exponential time for `{.x}`, `{;x}`
 * and `{&x}`, and polynomial time for expressions next to each other (`{a}{b}`, `{a}-{b}`).
 */
export function templateMatcher(template: string): TemplateMatcher {
  const states = compile(template);
  return { test: (uri) => matches(states, uri) };
}

/**
 * What one character may be: a UTF-16 code unit (0 or more), or one of the classes below. The
 * classes are those of the regular expressions this matcher replaced, line terminators included.
 */
type CharClass = number;
/** `[^/?#]`: a character of one path segment. */
const SEGMENT: CharClass = -1;
/** `.` (without the s flag): anything but a line terminator. */
const LINE: CharClass = -2;
/** `[^#]`: anything before a fragment. */
const NOT_HASH: CharClass = -3;

const SLASH = 0x2f;
const QUESTION = 0x3f;
const HASH = 0x23;

function accepts(charClass: CharClass, code: number): boolean {
  switch (charClass) {
    case SEGMENT:
      return code !== SLASH && code !== QUESTION && code !== HASH;
    case LINE:
      return code !== 0x0a && code !== 0x0d && code !== 0x2028 && code !== 0x2029;
    case NOT_HASH:
      return code !== HASH;
    default:
      return code === charClass;
  }
}

/**
 * What an expression can expand to: `class*` (`loop`), `(lead class*)?` (`optional`) or
 * `(lead class*)*` (`repeated`). `{.x}`, `{;x}` and `{&x}` are optional rather than repeated:
 * their lead is in their class, so one lead and the rest is the same set of strings as several.
 */
type Expansion = { kind: 'loop'; of: CharClass } | { kind: 'optional' | 'repeated'; lead: CharClass; of: CharClass };

const SIMPLE: Expansion = { kind: 'loop', of: SEGMENT };

const EXPANSIONS: Readonly<Record<string, Expansion>> = {
  '': SIMPLE,
  '+': { kind: 'loop', of: LINE },
  '#': { kind: 'optional', lead: HASH, of: LINE },
  '.': { kind: 'optional', lead: 0x2e, of: SEGMENT },
  '/': { kind: 'repeated', lead: SLASH, of: SEGMENT },
  ';': { kind: 'optional', lead: 0x3b, of: SEGMENT },
  '?': { kind: 'optional', lead: QUESTION, of: NOT_HASH },
  '&': { kind: 'optional', lead: 0x26, of: NOT_HASH },
};

/**
 * A state of the automaton: it reads one character of class `on` and goes to `to`, or moves
 * to `skip` (-1: none) without reading one. The state after the last is the accepting one.
 */
interface State {
  on: CharClass;
  to: number;
  skip: number;
}

function compile(template: string): State[] {
  const states: State[] = [];
  const literal = (text: string): void => {
    for (let i = 0; i < text.length; i++) states.push({ on: text.charCodeAt(i), to: states.length + 1, skip: -1 });
  };
  let last = 0;
  // An expression runs from a `{` to the next `}`; without a `}` after it, the rest is literal.
  for (let open = template.indexOf('{'); open !== -1; open = template.indexOf('{', last)) {
    const close = template.indexOf('}', open);
    if (close === -1) break;
    literal(template.slice(last, open));
    const operator = template.charAt(open + 1);
    const expansion = (close > open + 1 && EXPANSIONS[operator]) || SIMPLE;
    const at = states.length;
    if (expansion.kind === 'loop') states.push({ on: expansion.of, to: at, skip: at + 1 });
    else {
      states.push({ on: expansion.lead, to: at + 1, skip: at + 2 });
      states.push({ on: expansion.of, to: at + 1, skip: expansion.kind === 'repeated' ? at : at + 2 });
    }
    last = close + 1;
  }
  literal(template.slice(last));
  return states;
}

function matches(states: readonly State[], uri: string): boolean {
  const accepting = states.length;
  // The step at which each state was last reached, so that a step lists a state once.
  const reached = new Int32Array(accepting + 1).fill(-1);
  let step = 0;
  const enter = (list: number[], state: number): void => {
    // At most one move without reading leaves a state, so what it leads to is a chain.
    for (let s = state; s !== -1 && reached[s] !== step; s = s === accepting ? -1 : states[s]!.skip) {
      reached[s] = step;
      list.push(s);
    }
  };
  let current: number[] = [];
  let next: number[] = [];
  enter(current, 0);
  for (let i = 0; i < uri.length && current.length > 0; i++) {
    const code = uri.charCodeAt(i);
    step += 1;
    next.length = 0;
    for (const s of current) {
      const state = states[s];
      if (state !== undefined && accepts(state.on, code)) enter(next, state.to);
    }
    [current, next] = [next, current];
  }
  return reached[accepting] === step;
}
