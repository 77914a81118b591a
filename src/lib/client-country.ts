/** The headers a proxy or CDN in front of svcgw names the client's country in, first found wins. */
const COUNTRY_HEADERS = ['cf-ipcountry', 'x-country'] as const;

/**
 * The client's country as the proxy in front named it: a two-character code (ISO 3166-1 alpha-2,
 * or a CDN's own such as `XX`/`T1`), upper-cased; null when no header holds one. svcgw does not
 * look addresses up itself, and a client talking to it directly can name any country.
 */
export function clientCountry(headers: Record<string, string | string[] | undefined>): string | null {
  for (const name of COUNTRY_HEADERS) {
    const raw = headers[name];
    const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
    if (value && /^[A-Za-z0-9]{2}$/.test(value)) return value.toUpperCase();
  }
  return null;
}
