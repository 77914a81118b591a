import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createSecretManagers } from '../../../src/secrets/secret-managers.js';
import { startMockVault } from '../../helpers/mock-vault.js';

it('vault token, approle, kubernetes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spk-'));
  writeFileSync(join(dir, 'token'), 'eyJ.jwt.sig\n');
  const network = {
    extraCa: null,
    timeoutMs: 5000,
    ambientCredentials: true,
    azureChallengeVerification: true,
    kubernetesTokenPath: join(dir, 'token'),
    now: Date.now,
  };
  const vault = await startMockVault();
  vault.put('secret/openai', { api_key: 'sk-vvv' });
  const managers = createSecretManagers(network);
  const target = (auth: any) => ({
    referenceId: 'r' + Math.random(),
    slug: 's',
    version: '1',
    managerType: 'hashicorp_vault' as const,
    auth,
    secretPath: 'secret/openai',
  });
  const token = vault.addToken('root', 'team');
  expect(
    await managers.read(
      target({ vault_auth_type: 'token', vault_addr: vault.url, vault_token: token, vault_namespace: 'team' }),
    ),
  ).toEqual({ api_key: 'sk-vvv' });
  vault.addAppRole('role-1', 'secret-1');
  const t2 = target({
    vault_auth_type: 'approle',
    vault_addr: vault.url,
    vault_role_id: 'role-1',
    vault_secret_id: 'secret-1',
  });
  expect(await managers.read(t2)).toEqual({ api_key: 'sk-vvv' });
  vault.revokeLoginTokens();
  await managers.write(t2, 'api_key', 'sk-new');
  expect(vault.get('secret/openai')).toEqual({ api_key: 'sk-new' });
  vault.addKubernetesRole('gw', 'eyJ.jwt.sig');
  await managers
    .read(target({ vault_auth_type: 'kubernetes', vault_addr: vault.url, vault_role: 'gw' }))
    .catch((e) => console.log(e.cause?.response, vault.calls.slice(-2)));
  expect(
    await managers.read(target({ vault_auth_type: 'kubernetes', vault_addr: vault.url, vault_role: 'gw' })),
  ).toEqual({ api_key: 'sk-new' });
  await expect(
    managers.read(
      target({ vault_auth_type: 'approle', vault_addr: vault.url, vault_role_id: 'role-1', vault_secret_id: 'bad' }),
    ),
  ).rejects.toThrow(/invalid role/);
  console.log(vault.calls);
  await vault.close();
});
