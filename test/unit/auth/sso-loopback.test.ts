import { describe, expect, it } from 'vitest';
import { loopbackRedirectProblem } from '../../../src/auth/sso/loopback.js';
import { isInsecureIssuerAllowed } from '../../../src/auth/sso/oidc.js';
import { normaliseCertificate } from '../../../src/auth/sso/saml.js';
import { selfSignedCertificate } from '../../helpers/self-signed-cert.js';

describe('loopback redirect URIs (RFC 8252)', () => {
  it('accepts an IPv4 or IPv6 loopback address with a port, any path and query', () => {
    for (const uri of ['http://127.0.0.1:53219/callback', 'http://[::1]:8000/', 'http://127.0.0.1:1/cb?x=1'])
      expect(loopbackRedirectProblem(uri), uri).toBeNull();
  });

  it('refuses every other host, https, localhost, a missing port, credentials and fragments', () => {
    const refused: Array<[string, RegExp]> = [
      ['not a url', /not a URL/],
      ['https://127.0.0.1:8000/cb', /http:\/\//],
      ['http://localhost:8000/cb', /loopback address/],
      ['http://127.0.0.2:8000/cb', /loopback address/],
      ['http://evil.example:8000/cb', /loopback address/],
      ['http://127.0.0.1.evil.example:8000/cb', /loopback address/],
      ['http://127.0.0.1/cb', /port/],
      ['http://user:pw@127.0.0.1:8000/cb', /credentials/],
      ['http://127.0.0.1:8000/cb#frag', /fragment/],
    ];
    for (const [uri, message] of refused) expect(loopbackRedirectProblem(uri), uri).toMatch(message);
  });
});

describe('identity provider addresses and certificates', () => {
  it('takes https issuers, and http only on this machine', () => {
    expect(isInsecureIssuerAllowed('https://login.example.com')).toBe(true);
    expect(isInsecureIssuerAllowed('http://127.0.0.1:4000')).toBe(true);
    expect(isInsecureIssuerAllowed('http://localhost:4000')).toBe(true);
    expect(isInsecureIssuerAllowed('http://login.example.com')).toBe(false);
    expect(isInsecureIssuerAllowed('')).toBe(false);
  });

  it('reads a certificate as PEM or as its bare base64 body, and refuses anything else', () => {
    const { certificate } = selfSignedCertificate();
    const body = certificate.replace(/-----[A-Z ]+-----|\s/g, '');
    expect(normaliseCertificate(certificate)).toBe(normaliseCertificate(body));
    expect(normaliseCertificate(body)).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
    expect(normaliseCertificate('bm90IGEgY2VydA==')).toBeNull();
    expect(normaliseCertificate('<xml/>')).toBeNull();
  });
});
