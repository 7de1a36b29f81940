/**
 * The production signer SVC_SIGNER chooses (README "Signing custody"), checked once before
 * the service starts: its signature must verify under the public key we are about to publish.
 */
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { SignerSetupError, assertSignerUsable, loadOrCreateProductionSigner } from '../signer.ts';
import type { Signer } from '../signer.ts';
import type { SecretResolver } from '../secret-refs.ts';
import { openAwsKmsSigner } from './aws-kms.ts';
import { openPkcs11Signer } from './pkcs11.ts';

export async function openProductionSigner(config: Config, secrets: SecretResolver, log?: Logger): Promise<Signer> {
  const signer = await open(config, secrets, log);
  try {
    assertSignerUsable(signer);
  } catch (err) {
    signer.close?.();
    throw err;
  }
  return signer;
}

async function open(config: Config, secrets: SecretResolver, log?: Logger): Promise<Signer> {
  switch (config.signer) {
    case 'file':
      return loadOrCreateProductionSigner(config.dataDir);
    case 'pkcs11': {
      // loadConfig guarantees these for SVC_SIGNER=pkcs11.
      const pinRef = config.pkcs11PinRef!;
      // Resolved once, here: the token logs in again with it whenever it ends our session
      // (pkcs11.ts), at a seal, where waiting on a secret manager is no option.
      const resolved = await secrets.resolveOperator(pinRef);
      // Name the reference and why it failed, never a value.
      if (!resolved.ok) throw new SignerSetupError(`SVC_PKCS11_PIN_REF ${pinRef} cannot be resolved: ${resolved.error}`);
      const pin = () => resolved.value;
      return openPkcs11Signer({
        module: config.pkcs11Module!,
        tokenLabel: config.pkcs11TokenLabel!,
        keyLabel: config.pkcs11KeyLabel,
        pin,
        createKey: config.pkcs11CreateKey,
        log,
      });
    }
    case 'aws-kms':
      return openAwsKmsSigner({ keyId: config.kmsKeyId!, region: config.kmsRegion!, endpoint: config.kmsEndpoint, timeoutMs: config.kmsTimeoutMs });
  }
}
