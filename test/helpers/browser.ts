/**
 * What a browser does in a sign-in, with plain HTTP: it keeps cookies per host and follows
 * redirects by hand, so that a test sees (and can stop at) every hop.
 */
export function createBrowser() {
  const jar = new Map<string, Map<string, string>>();

  async function request(url: URL, init: { method?: string; form?: Record<string, string> } = {}) {
    const cookies = jar.get(url.host);
    const headers: Record<string, string> = { 'user-agent': 'svcgw-test-browser' };
    if (cookies && cookies.size > 0)
      headers.cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const response = await fetch(url, { method: init.method ?? 'GET', headers, redirect: 'manual', body });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const host = jar.get(url.host) ?? new Map<string, string>();
      host.set(pair!.slice(0, at).trim(), pair!.slice(at + 1).trim());
      jar.set(url.host, host);
    }
    return response;
  }

  /**
   * Follows redirects from `start` until `stop` says a URL is the end (then returns it without
   * requesting it), calling `page` for any page that answers 200 (a form to fill in): it returns
   * the next request to make (a GET when it has no form).
   */
  async function follow(
    start: URL,
    stop: (url: URL) => boolean,
    page: (url: URL, html: string) => { url: URL; form?: Record<string, string> },
  ): Promise<URL> {
    let next: { url: URL; method: string; form?: Record<string, string> } = { url: start, method: 'GET' };
    for (let hop = 0; hop < 30; hop++) {
      if (stop(next.url)) return next.url;
      const response = await request(next.url, next);
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        next = { url: new URL(location, next.url), method: 'GET' };
        continue;
      }
      const text = await response.text();
      if (response.status !== 200) throw new Error(`${next.method} ${next.url.href}: ${response.status} ${text}`);
      const submit = page(next.url, text);
      next = submit.form ? { url: submit.url, method: 'POST', form: submit.form } : { url: submit.url, method: 'GET' };
    }
    throw new Error('too many redirects');
  }

  return { request, follow };
}

export type Browser = ReturnType<typeof createBrowser>;

/** The devInteractions forms of oidc-provider: sign in as `account` (any password), then consent. */
export function oidcProviderForms(account: string) {
  return (url: URL, html: string): { url: URL; form: Record<string, string> } => {
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
    if (!action || !prompt) throw new Error(`not an interaction page: ${url.href}\n${html.slice(0, 500)}`);
    const form: Record<string, string> = prompt === 'login' ? { prompt, login: account, password: 'any' } : { prompt };
    return { url: new URL(action.replace(/&amp;/g, '&'), url), form };
  };
}
