/**
 * A provider cannot be reached with the settings given (no base URL and no custom host, an
 * Azure field missing, a custom host that is not a usable base). It is a configuration
 * problem of the provider entry, not of the request, so the message names what to set.
 */
export class ProviderConfigError extends Error {
  readonly code = 'PROVIDER_CONFIG';
  readonly provider: string;
  /** The settings that are missing or wrong, e.g. ['resourceName', 'deploymentId']. */
  readonly fields: readonly string[];

  constructor(provider: string, message: string, fields: readonly string[] = []) {
    super(message);
    this.name = 'ProviderConfigError';
    this.provider = provider;
    this.fields = fields;
  }
}

/**
 * The path to forward is not a plain path under the provider's base: it holds dot segments
 * ('..', '%2e%2e') that URL parsers would resolve outside the base, where the gateway's
 * credential was never meant to go.
 */
export class UpstreamPathError extends Error {
  readonly code = 'INVALID_UPSTREAM_PATH';

  constructor(message: string) {
    super(message);
    this.name = 'UpstreamPathError';
  }
}
