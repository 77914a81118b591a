import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildUrl, networkError, serverError } from './client/http-client.js';
import { FatalError } from './fatal-error.js';

/** What POST /v1/sso/token answers (the parts the CLI uses). */
export interface SignedIn {
  session_token: string;
  session: { id: string; expires_at: string; workspace_id: string | null };
  user: { id: string; email: string; role: string };
}

export interface SsoLoginOptions {
  baseUrl: string;
  protocol?: 'oidc' | 'saml' | undefined;
  workspace?: string | undefined;
  /** Opens the identity provider's address (in a browser); null: only print it. */
  openBrowser: ((url: string) => void) | null;
  timeoutMs: number;
  /** Where progress for the person goes (stderr). */
  say: (line: string) => void;
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:sans-serif;margin:3em"><h1>${title}</h1><p>${text}</p></body>`;
const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * `svcgw login --sso`, as a native app signs in (RFC 8252): listen on a loopback port, ask the
 * server to start a login that comes back there (with a PKCE challenge only this process can
 * answer), open the identity provider's address in the browser, wait for the redirect, then
 * exchange the one-time code for a session.
 */
export async function ssoLogin(options: SsoLoginOptions): Promise<SignedIn> {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const state = randomBytes(16).toString('base64url');
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  try {
    const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
    const providerUrl = await startLogin(options, { redirectUri, challenge, state });
    if (options.openBrowser) {
      options.say(`Opening the identity provider in your browser; if it does not open, go to:\n${providerUrl}`);
      options.openBrowser(providerUrl);
    } else options.say(`To sign in, open this address in a browser:\n${providerUrl}`);
    const code = await waitForRedirect(server, state, options.timeoutMs);
    return await exchange(options.baseUrl, code, verifier);
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

/** Asks the server to start the login; its answer is the identity provider's address. */
async function startLogin(
  options: SsoLoginOptions,
  login: { redirectUri: string; challenge: string; state: string },
): Promise<string> {
  const url = buildUrl(options.baseUrl, '/v1/sso/start', {
    redirect_uri: login.redirectUri,
    code_challenge: login.challenge,
    code_challenge_method: 'S256',
    state: login.state,
    protocol: options.protocol,
    workspace: options.workspace,
  });
  let res: Response;
  try {
    res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(30_000) });
  } catch (error) {
    throw networkError(options.baseUrl, error);
  }
  const location = res.headers.get('location');
  if (res.status === 302 && location) return location;
  throw serverError(options.baseUrl, res.status, await res.json().catch(() => null));
}

/** The one-time code the browser brings back, once the identity provider has answered. */
function waitForRedirect(server: Server, state: string, timeoutMs: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new FatalError(
            `no answer from the browser within ${Math.round(timeoutMs / 1000)} s; run svcgw login --sso again`,
          ),
        ),
      timeoutMs,
    );
    server.on('request', (req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname !== '/callback' || url.searchParams.get('state') !== state) {
        res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' });
        res.end(PAGE('Not found', 'This address only receives the answer of svcgw login --sso.'));
        return;
      }
      const code = url.searchParams.get('code');
      const failure = url.searchParams.get('error_description') ?? url.searchParams.get('error');
      res.writeHead(code ? 200 : 401, { 'content-type': 'text/html; charset=utf-8', connection: 'close' });
      res.end(
        code
          ? PAGE('Signed in', 'You are signed in to svcgw; you can close this window and return to the terminal.')
          : PAGE('Sign-in failed', escapeHtml(failure ?? 'The identity provider did not sign you in.')),
      );
      clearTimeout(timer);
      if (code) resolve(code);
      else {
        const errorCode = url.searchParams.get('error_code');
        reject(new FatalError(`single sign-on failed: ${failure ?? 'no code'}${errorCode ? ` (${errorCode})` : ''}`));
      }
    });
  });
}

async function exchange(baseUrl: string, code: string, verifier: string): Promise<SignedIn> {
  let res: Response;
  try {
    res = await fetch(buildUrl(baseUrl, '/v1/sso/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ code, code_verifier: verifier }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw networkError(baseUrl, error);
  }
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) throw serverError(baseUrl, res.status, body);
  return body as SignedIn;
}

/**
 * Opens a URL with `command` (SVCGW_BROWSER, `--browser`), else the platform's opener. Detached:
 * the browser outlives the CLI; a failure to start it leaves the printed address to use.
 */
export function browserOpener(command: string | undefined, say: (line: string) => void): (url: string) => void {
  return (url) => {
    const [file, ...args] = command
      ? [command]
      : process.platform === 'darwin'
        ? ['open']
        : process.platform === 'win32'
          ? ['cmd', '/c', 'start', '""']
          : ['xdg-open'];
    const child = spawn(file, [...args, url], { detached: true, stdio: 'ignore' });
    child.on('error', (error) => say(`could not open a browser (${error.message}); open the address above yourself`));
    child.unref();
  };
}
