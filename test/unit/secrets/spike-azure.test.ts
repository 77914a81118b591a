import { afterEach, expect, it, vi } from 'vitest';
import { createSecretManagers } from '../../../src/secrets/secret-managers.js';
import { startMockAzure } from '../../helpers/mock-azure-key-vault.js';

afterEach(() => vi.unstubAllEnvs());
it('azure entra, managed, default', async () => {
  const azure = await startMockAzure({ tenant: 'tenant-1' });
  const network = {
    extraCa: azure.cert,
    timeoutMs: 5000,
    ambientCredentials: true,
    azureChallengeVerification: false,
    kubernetesTokenPath: '/x',
    now: Date.now,
  };
  azure.addApp('client-1', 'secret-1');
  azure.setSecret('openai-key', 'sk-azure');
  const managers = createSecretManagers(network);
  const target = (auth: any) => ({
    referenceId: 'r' + Math.random(),
    slug: 's',
    version: '1',
    managerType: 'azure_kv' as const,
    auth,
    secretPath: 'openai-key',
  });
  try {
    const t1 = target({
      azure_auth_mode: 'entra',
      azure_entra_tenant_id: 'tenant-1',
      azure_entra_client_id: 'client-1',
      azure_entra_client_secret: 'secret-1',
      azure_vault_url: azure.url,
      azure_authority_host: azure.url,
    });
    expect(await managers.read(t1)).toBe('sk-azure');
    await managers.write(t1, null, 'sk-azure-2');
    expect(azure.secret('openai-key')).toBe('sk-azure-2');
    console.log(azure.calls);
  } catch (e) {
    console.log(e, azure.calls);
    throw e;
  }
  vi.stubEnv('IDENTITY_ENDPOINT', `${azure.url}/msi/token`);
  vi.stubEnv('IDENTITY_HEADER', 'hdr-1');
  azure.addManagedIdentity('mi-1', 'hdr-1');
  try {
    expect(
      await managers.read(
        target({ azure_auth_mode: 'managed', azure_managed_client_id: 'mi-1', azure_vault_url: azure.url }),
      ),
    ).toBe('sk-azure-2');
  } catch (e) {
    console.log(e, azure.calls.slice(-4));
    throw e;
  }
  vi.unstubAllEnvs();
  vi.stubEnv('AZURE_TENANT_ID', 'tenant-1');
  vi.stubEnv('AZURE_CLIENT_ID', 'client-1');
  vi.stubEnv('AZURE_CLIENT_SECRET', 'secret-1');
  vi.stubEnv('AZURE_AUTHORITY_HOST', azure.url);
  try {
    expect(await managers.read(target({ azure_auth_mode: 'default', azure_vault_url: azure.url }))).toBe('sk-azure-2');
  } catch (e) {
    console.log(e, azure.calls.slice(-4));
    throw e;
  }
  await azure.close();
});
