import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import { onTestFinished } from 'vitest';
import { listenOnLoopback } from './loopback-server.js';
import { selfSignedCertificate } from './self-signed-cert.js';

/**
 * samlify, loaded without its type declarations: they pull in the DOM library (through
 * @xmldom/xmldom), whose fetch types would replace Node's for the whole project.
 */
const samlify = createRequire(import.meta.url)('samlify');

// samlify validates documents against the SAML schema with a validator of the caller's choice;
// the test IdP reads only svcgw's own AuthnRequests, so none is needed here.
samlify.setSchemaValidator({ validate: async () => 'skipped' });

const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

export interface TestSamlIdp {
  /** Its single sign-on URL (HTTP-Redirect binding). */
  entryPoint: string;
  entityId: string;
  certificate: string;
  /** Who the next sign-in is; how the next response is signed. */
  next: { email: string; signAssertion: boolean };
  /** The AuthnRequests received (their ids), in order. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * A SAML 2.0 identity provider (samlify) on 127.0.0.1 that signs its assertions with a key and
 * certificate made for the test. GET /sso takes svcgw's AuthnRequest and answers with the
 * auto-submitting form of the HTTP-POST binding (as real IdPs do after their login page), for
 * the test's browser to post to svcgw's assertion consumer service. `spMetadata` is svcgw's own
 * (GET /v1/sso/saml/metadata).
 */
export async function startSamlIdp(options: { spMetadata: () => Promise<string> }): Promise<TestSamlIdp> {
  const { privateKey, certificate } = selfSignedCertificate();
  const server = createServer();
  const listening = await listenOnLoopback(server);
  const entityId = `${listening.url}/metadata`;
  const idp = samlify.IdentityProvider({
    entityID: entityId,
    privateKey,
    signingCert: certificate,
    isAssertionEncrypted: false,
    wantAuthnRequestsSigned: false,
    nameIDFormat: [EMAIL_FORMAT],
    singleSignOnService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: `${listening.url}/sso` }],
  });
  const state: TestSamlIdp = {
    entryPoint: `${listening.url}/sso`,
    entityId,
    certificate,
    next: { email: 'someone@example.test', signAssertion: true },
    requests: [],
    close: () => listening.close(),
  };

  server.on('request', (req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', listening.url);
      if (url.pathname !== '/sso') {
        res.writeHead(404).end();
        return;
      }
      const metadata = await options.spMetadata();
      const sp = samlify.ServiceProvider({ metadata });
      const parsed = await idp.parseLoginRequest(sp, 'redirect', { query: Object.fromEntries(url.searchParams) });
      state.requests.push(String(parsed.extract.request?.id));
      // An SP that does not want assertions signed gets the response signed instead (samlify's
      // rule): a signed message around an unsigned assertion.
      const target = state.next.signAssertion
        ? sp
        : samlify.ServiceProvider({
            entityID: sp.entityMeta.getEntityID(),
            wantAssertionsSigned: false,
            assertionConsumerService: [
              {
                Binding: samlify.Constants.namespace.binding.post,
                Location: sp.entityMeta.getAssertionConsumerService('post') as string,
              },
            ],
          });
      const response = (await idp.createLoginResponse(
        target,
        parsed,
        'post',
        { email: state.next.email },
        { relayState: url.searchParams.get('RelayState') ?? '' },
      )) as { context: string; entityEndpoint: string; relayState?: string };
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          `<form method="post" action="${response.entityEndpoint}">` +
            `<input type="hidden" name="SAMLResponse" value="${response.context}"/>` +
            `<input type="hidden" name="RelayState" value="${response.relayState ?? ''}"/>` +
            '</form><script>document.forms[0].submit()</script>',
        );
    })().catch((error: unknown) => res.writeHead(500).end(String(error)));
  });
  onTestFinished(() => listening.close());
  return state;
}

/** The fields of the IdP's auto-submitting form. */
export function postedForm(html: string): { action: string; fields: Record<string, string> } {
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error(`not a form: ${html.slice(0, 300)}`);
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/name="([^"]+)" value="([^"]*)"/g)) fields[match[1]!] = match[2]!;
  return { action, fields };
}
