/**
 * The JSON object a model's text carries: the whole text, else the first fenced ```json
 * block, else the span from the first '{' to the last '}'. Models wrap JSON in prose and
 * fences often enough that judging only a bare object would fail good answers.
 */
export function jsonInText(text: string): { found: true; value: unknown } | { found: false } {
  const candidates = [text.trim()];
  const fenced = /```(?:json)?[ \t]*\n([\s\S]*?)```/i.exec(text);
  if (fenced) candidates.push(fenced[1]!.trim());
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first !== -1 && last > first) candidates.push(text.slice(first, last + 1));
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      return { found: true, value: JSON.parse(candidate) as unknown };
    } catch {
      // the next candidate
    }
  }
  return { found: false };
}
