import { randomBytes } from 'node:crypto';

/*
 * Gemini 3 models attach an opaque `thoughtSignature` to their function calls and refuse the
 * next turn unless it comes back with the call. The OpenAI shape has nowhere to keep it but the
 * tool call id, which clients return unchanged, so the id carries it after a marker that
 * neither our random part nor base64 can contain.
 */
const MARK = '~sig~';

export function newToolCallId(thoughtSignature?: unknown): string {
  const id = `call_${randomBytes(12).toString('hex')}`;
  return typeof thoughtSignature === 'string' && thoughtSignature !== '' ? `${id}${MARK}${thoughtSignature}` : id;
}

/** The thought signature carried by an id this adapter made, if any. */
export function thoughtSignatureOf(id: unknown): string | undefined {
  if (typeof id !== 'string') return undefined;
  const at = id.indexOf(MARK);
  return at === -1 ? undefined : id.slice(at + MARK.length) || undefined;
}
