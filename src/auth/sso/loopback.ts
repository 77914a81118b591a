/**
 * Native apps receive the identity provider's answer on a loopback redirect (RFC 8252 §7.3):
 * `http://127.0.0.1:<port>/<path>` or `http://[::1]:<port>/<path>`, the port chosen by the app
 * when it starts listening. Only those are accepted, so a login can never be sent to another
 * machine. `localhost` is refused, as §8.3 advises (it may resolve elsewhere).
 */
export function loopbackRedirectProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'redirect_uri is not a URL.';
  }
  if (url.protocol !== 'http:') return 'redirect_uri must be a loopback http:// address (RFC 8252).';
  if (url.hostname !== '127.0.0.1' && url.hostname !== '[::1]')
    return 'redirect_uri must be a loopback address, http://127.0.0.1:<port>/… or http://[::1]:<port>/… (RFC 8252).';
  if (url.port === '') return 'redirect_uri must name the port the client listens on.';
  if (url.username !== '' || url.password !== '' || url.hash !== '')
    return 'redirect_uri must not carry credentials or a fragment.';
  return null;
}

/** Whether a host is this machine, for identity providers run on it (development and tests). */
export const isLoopbackHost = (hostname: string): boolean =>
  hostname === '127.0.0.1' || hostname === '[::1]' || hostname === 'localhost';
