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
