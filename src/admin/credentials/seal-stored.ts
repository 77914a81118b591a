import type { SecretBox } from '../../lib/secret-box.js';
import type { IntegrationRepository } from '../../storage/repositories/integrations.js';
import type { VirtualKeyRepository } from '../../storage/repositories/virtual-keys.js';
import { sealClearSecrets } from './secrets.js';

type Stored = Pick<IntegrationRepository & VirtualKeyRepository, 'allConfigurations' | 'setConfigurations'>;

/**
 * Encrypts secret configuration fields that older versions stored in clear (a name such as
 * `subscription_key` that did not count as secret then). Runs when the server starts; rows that
 * need nothing are not written. Until it has run they are masked when read all the same.
 * Returns how many rows it sealed.
 */
export async function sealStoredConfigurations(deps: {
  stores: readonly Stored[];
  secretBox: SecretBox;
}): Promise<number> {
  let sealed = 0;
  for (const store of deps.stores) {
    for (const row of await store.allConfigurations()) {
      const next = sealClearSecrets(deps.secretBox, row.configurations);
      if (next === null) continue;
      await store.setConfigurations(row.id, next);
      sealed++;
    }
  }
  return sealed;
}
