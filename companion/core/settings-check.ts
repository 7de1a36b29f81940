/**
 * The start-up checks that need the machine (loadConfig, in config.ts, stays pure): every
 * setting that names a file, a folder or a secret reference is looked at once before the
 * service starts, so a typo stops it at once with one line naming the setting (main.ts exits
 * 2), instead of surfacing hours later as a send that waits on a secret or a console that
 * answers 404. Values of secrets never appear in a line; file paths, which are not secret, do.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.ts';
import { SecretResolver, secretResolverOptions } from './secret-refs.ts';
import { readGrantsFile, readRefMapFile } from './secrets/grants.ts';
import { storeKekProblems } from './secrets/store-kek.ts';
import { certificatesFromPem } from '../../shared/timestamp.ts';
import { parseWitnessList } from '../../shared/witness.ts';

/** Every problem, each one line; empty when the service can start. */
export async function settingProblems(config: Config): Promise<string[]> {
  const problems: string[] = [];
  const dataDir = statOf(config.dataDir);
  if (dataDir !== undefined && !dataDir.isDirectory()) problems.push(`SVC_DATA_DIR is not a folder: ${config.dataDir}`);

  if (config.secretRefMapFile !== undefined) {
    const map = readRefMapFile(config.secretRefMapFile);
    if (!map.ok) problems.push(map.problem);
  }
  if (config.secretGrantsFile !== undefined) {
    const grants = readGrantsFile(config.secretGrantsFile, config);
    if (!grants.ok) problems.push(grants.problem);
  }

  if (config.consoleDir !== undefined) {
    const dir = statOf(config.consoleDir);
    if (dir === undefined || !dir.isDirectory()) problems.push(`SVC_CONSOLE_DIR is not a folder: ${config.consoleDir}`);
    else if (!readable(path.join(config.consoleDir, 'index.html'))) problems.push(`SVC_CONSOLE_DIR has no readable index.html (build the console with npm run build): ${config.consoleDir}`);
  }
  if (config.pkcs11Module !== null && !readable(config.pkcs11Module)) {
    problems.push(`SVC_PKCS11_MODULE is not a readable file: ${config.pkcs11Module}`);
  }
  // A token is kept only when its TSA chains to these roots: without them none ever would be.
  if (config.tsaUrls.length > 0 && config.tsaRootsFile === undefined) problems.push('SVC_TSA_URLS is set but SVC_TSA_ROOTS_FILE is not: name the PEM file of the TSA root certificates');
  if (config.tsaRootsFile !== undefined) {
    try {
      certificatesFromPem(fs.readFileSync(config.tsaRootsFile, 'utf8'));
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code ? 'is not a readable file' : `holds no usable certificate (${(e as Error).message})`;
      problems.push(`SVC_TSA_ROOTS_FILE ${why}: ${config.tsaRootsFile}`);
    }
  }

  // c2sp.org/tlog-witness witnesses: one list, from the variable or the file, every entry valid.
  if (config.witnessesFile !== undefined) {
    if (config.witnesses.length > 0) problems.push('SVC_WITNESSES and SVC_WITNESSES_FILE are both set: set one');
    let text: string | undefined;
    try {
      text = fs.readFileSync(config.witnessesFile, 'utf8');
    } catch {
      problems.push(`SVC_WITNESSES_FILE is not a readable file: ${config.witnessesFile}`);
    }
    if (text !== undefined) problems.push(...parseWitnessList(text, 'SVC_WITNESSES_FILE').problems);
  }

  // Each operator reference must resolve now; one that cannot would fail at its first use.
  // Skipped while a file above is unusable: the resolver reads those files.
  if (problems.length > 0) return problems;
  // No cache: each reference is fetched once here, and this resolver is then dropped.
  const secrets = new SecretResolver({ ...secretResolverOptions(config), cacheMs: 0 });
  try {
    const refs: [string, string | null][] = [
      ['SVC_VAULT_TOKEN_REF', config.vaultTokenRef],
      ['SVC_BILLING_LOCAL_SECRET_REF', config.billingLocalSecretRef],
      ['SVC_STRIPE_SECRET_KEY_REF', config.stripeSecretKeyRef],
      ['SVC_STRIPE_WEBHOOK_SECRET_REF', config.stripeWebhookSecretRef],
      ['SVC_PKCS11_PIN_REF', config.signer === 'pkcs11' ? config.pkcs11PinRef : null],
    ];
    const answers = await Promise.all(refs.map(async ([name, ref]) => [name, ref, ref === null ? null : await secrets.resolveOperator(ref)] as const));
    for (const [name, ref, r] of answers) {
      if (r !== null && !r.ok) problems.push(`${name} ${ref} does not resolve (${r.provider}: ${r.error})`);
    }
    // The store's key-encryption keys must resolve to 32-byte keys, and a local key file be usable.
    problems.push(...(await storeKekProblems(config, secrets)));
  } finally {
    secrets.close();
  }
  return problems;
}

function statOf(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p);
  } catch {
    return undefined;
  }
}

function readable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.R_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
