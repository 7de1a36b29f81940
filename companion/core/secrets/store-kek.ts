/**
 * Where the store's key-encryption keys come from (core/secrets/envelope.ts):
 *
 * - SVC_STORE_KEK_REF, a secret reference the operator's resolver reads (env://, secret://,
 *   aws-sm://, vault://), is the current KEK: every new value is sealed under it.
 * - SVC_STORE_KEK_PREVIOUS_REFS are earlier KEKs, only opened with, until
 *   `svc-admin rewrap-secrets` has re-sealed every value under the current one.
 * - Without SVC_STORE_KEK_REF the service makes a KEK of its own, a file in the data directory
 *   (store-kek.key, mode 0600), so no stored secret is ever in clear in the database; its
 *   protection is then the data directory's (a copy of the database alone does not open the
 *   values, a copy of the whole directory does). When a reference is set later, the file's key
 *   is still opened with, so values move to the managed key with one rewrap.
 *
 * A reference that does not resolve, or holds anything but a 32-byte key, refuses the start
 * with one line naming the setting and never the value (StoreKekError; main.ts exits 2).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { secureDataFiles } from '../db.ts';
import type { SecretResolver } from '../secret-refs.ts';
import { KEK_BYTES, StoreCipher, newKek, parseKek } from './envelope.ts';
import type { Kek } from './envelope.ts';

export const LOCAL_KEK_FILE = 'store-kek.key';

/** The store's KEKs cannot be had, or do not open what is stored: a refused start. */
export class StoreKekError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreKekError';
  }
}

export type StoreKekSettings = Pick<Config, 'dataDir' | 'storeKekRef' | 'storeKekPreviousRefs'>;

/** Why one reference cannot serve as a KEK, or the KEK. */
export async function kekFromRef(secrets: SecretResolver, setting: string, ref: string): Promise<Kek | string> {
  const r = await secrets.resolveOperator(ref);
  if (!r.ok) return `${setting} ${ref} does not resolve (${r.provider}: ${r.error})`;
  const key = parseKek(r.value);
  if (!key) return `${setting} ${ref} does not hold a ${KEK_BYTES}-byte key (expected 64 hex digits or base64)`;
  return newKek(key, setting);
}

/** Every problem with the KEK settings, one line each (the settings check). */
export async function storeKekProblems(config: StoreKekSettings, secrets: SecretResolver): Promise<string[]> {
  const refs: [string, string][] = [
    ...(config.storeKekRef === null ? [] : [['SVC_STORE_KEK_REF', config.storeKekRef] as [string, string]]),
    ...config.storeKekPreviousRefs.map((r): [string, string] => ['SVC_STORE_KEK_PREVIOUS_REFS', r]),
  ];
  const answers = await Promise.all(refs.map(([setting, ref]) => kekFromRef(secrets, setting, ref)));
  const problems = answers.filter((a): a is string => typeof a === 'string');
  const local = readLocalKek(config.dataDir);
  if (typeof local === 'string') problems.push(local);
  return problems;
}

/** The cipher the store seals and opens with; throws StoreKekError. */
export async function openStoreCipher(config: StoreKekSettings, secrets: SecretResolver): Promise<StoreCipher> {
  const problems: string[] = [];
  const keks: Kek[] = [];
  for (const [setting, ref] of [
    ...(config.storeKekRef === null ? [] : [['SVC_STORE_KEK_REF', config.storeKekRef] as const]),
    ...config.storeKekPreviousRefs.map((r) => ['SVC_STORE_KEK_PREVIOUS_REFS', r] as const),
  ]) {
    const kek = await kekFromRef(secrets, setting, ref);
    if (typeof kek === 'string') problems.push(kek);
    else keks.push(kek);
  }
  const local = config.storeKekRef === null ? localKek(config.dataDir) : readLocalKek(config.dataDir);
  if (typeof local === 'string') problems.push(local);
  if (problems.length > 0) throw new StoreKekError(problems.join('; '));
  if (config.storeKekRef === null) return new StoreCipher(local as Kek);
  const [current, ...previous] = keks;
  return new StoreCipher(current!, [...previous, ...(local ? [local as Kek] : [])]);
}

function localFile(dataDir: string): string {
  return path.join(dataDir, LOCAL_KEK_FILE);
}

/** The local KEK file's key, undefined when there is none, or why it cannot be used. */
export function readLocalKek(dataDir: string): Kek | string | undefined {
  const file = localFile(dataDir);
  let text: string;
  try {
    // Made private at every start, as the database files are (core/db.ts secureDataFiles).
    fs.chmodSync(file, 0o600);
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    return `the store's key file ${file} cannot be read and made 0600 (${code ?? 'error'})`;
  }
  const key = parseKek(text);
  return key ? newKek(key, file) : `the store's key file ${file} does not hold a ${KEK_BYTES}-byte key`;
}

/**
 * The local KEK, made on first use: written to a temporary file (0600) and linked into place,
 * so a crash never leaves a half-written key and two processes starting at once agree on one.
 */
function localKek(dataDir: string): Kek | string {
  // The data directory is made private first (0700, or DataFilesError: exit 2 with its own
  // line), since the key file is the first thing the service writes there.
  secureDataFiles(dataDir);
  const found = readLocalKek(dataDir);
  if (found !== undefined) return found;
  const file = localFile(dataDir);
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const fd = fs.openSync(tmp, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o600);
    try {
      fs.writeSync(fd, `${randomBytes(KEK_BYTES).toString('base64')}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    try {
      fs.linkSync(tmp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    // The directory entry too must survive a power loss before any value is sealed under the key.
    const dir = fs.openSync(dataDir, 'r');
    try {
      fs.fsyncSync(dir);
    } finally {
      fs.closeSync(dir);
    }
  } catch (err) {
    return `the store's key file ${file} cannot be made (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return readLocalKek(dataDir) ?? `the store's key file ${file} vanished as it was made`;
}
