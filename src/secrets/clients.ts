import { rootCertificates } from 'node:tls';
import type { SecretTarget } from './types.js';

/** Client objects kept at most; a deployment has tens of references. */
const MAX_CLIENTS = 500;

/**
 * Vendor clients, one per reference and kept while the reference is unchanged: a client holds
 * its credentials (tokens, temporary keys) and refreshes them itself. A new version of a
 * reference replaces its client; the oldest clients go first beyond MAX_CLIENTS.
 */
export class VersionedCache<T> {
  readonly #entries = new Map<string, { version: string; value: T }>();

  constructor(private readonly dispose: (value: T) => void = () => undefined) {}

  get(target: Pick<SecretTarget, 'referenceId' | 'version'>, create: () => T): T {
    const entry = this.#entries.get(target.referenceId);
    if (entry && entry.version === target.version) return entry.value;
    if (entry) {
      this.#entries.delete(target.referenceId);
      this.dispose(entry.value);
    }
    if (this.#entries.size >= MAX_CLIENTS) {
      const [oldest, value] = this.#entries.entries().next().value!;
      this.#entries.delete(oldest);
      this.dispose(value.value);
    }
    const value = create();
    this.#entries.set(target.referenceId, { version: target.version, value });
    return value;
  }

  /** Forgets one reference's client (after its credentials were refused, say). */
  drop(referenceId: string): void {
    const entry = this.#entries.get(referenceId);
    if (!entry) return;
    this.#entries.delete(referenceId);
    this.dispose(entry.value);
  }
}

/**
 * Node's own trusted roots plus the operator's extra ones. Giving a TLS client `ca` replaces the
 * defaults, so they are listed again: a private CA is trusted *as well*, not instead.
 */
export const trustedCa = (extraPem: string): string[] => [...rootCertificates, extraPem];
