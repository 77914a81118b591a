import type { UpstreamAnswer } from './call-target.js';
import { discardAnswer } from './call-target.js';
import type { CredentialLookup } from './credential-lookup.js';
import type { GatewayRoute } from './exchange.js';
import type { GatewayHeaders } from './gateway-headers.js';
import { fromStored, type ResolvedTarget } from './resolve-target.js';
import type { AttemptOutcome } from './routing/router.js';

/**
 * A provider that answers 401 to a credential read from a secret manager may be seeing a key
 * that was rotated there since it was cached: the credential's secrets are read again and, when
 * they changed, the call is made once more with them. Only JSON routes (whose body can be sent
 * twice); the first answer is dropped unread. Any other outcome is returned as it is.
 */
export async function retryWithFreshSecrets(
  outcome: AttemptOutcome<UpstreamAnswer>,
  context: { route: GatewayRoute; target: ResolvedTarget; headers: GatewayHeaders; credentials: CredentialLookup },
  call: (target: ResolvedTarget) => Promise<AttemptOutcome<UpstreamAnswer>>,
): Promise<AttemptOutcome<UpstreamAnswer>> {
  const stored = context.target.stored;
  if (!outcome.ok || outcome.status !== 401 || context.route.body !== 'json' || !stored?.credential.fromSecretManager)
    return outcome;
  const fresh = await context.credentials.refreshSecrets(stored.credential);
  if (!fresh) return outcome;
  discardAnswer(outcome.response);
  return call(fromStored(fresh, context.target.source, context.headers));
}
