import type { IncomingHttpHeaders } from 'node:http';

const HOST = /^[A-Za-z0-9.-]{1,253}(:\d{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](:\d{1,5})?$/;

const first = (value: string | string[] | undefined): string | undefined =>
  (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim();

/**
 * The address a caller reached svcgw at (`https://gateway.example.com`), for the URLs handed
 * back to it (an agent server's gateway URL, the card's endpoints): the Host header, or a
 * proxy's X-Forwarded-Host and X-Forwarded-Proto. A value that is not a host name is ignored.
 * Only the caller itself gets what it sent, so it can only misdirect itself.
 */
export function publicBaseUrl(headers: IncomingHttpHeaders, protocol: string): string {
  const forwardedProto = first(headers['x-forwarded-proto'])?.toLowerCase();
  const proto = forwardedProto === 'https' || forwardedProto === 'http' ? forwardedProto : protocol;
  const forwardedHost = first(headers['x-forwarded-host']);
  const host = forwardedHost && HOST.test(forwardedHost) ? forwardedHost : first(headers.host);
  return `${proto}://${host && HOST.test(host) ? host : 'localhost'}`;
}
