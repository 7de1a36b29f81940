/**
 * `svc-admin restore` and `verify-store --from`: a backup folder is believed only after its
 * files match MANIFEST.json and the database in it passes verify-store.
 *
 * Restore copies into a staging folder inside the data directory (./fill-folder.ts), checks the
 * copies (not the originals, which could change in between), and moves them into place only
 * when they pass, the database last: a refused backup leaves nothing behind.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { keyId } from '../../shared/keys.ts';
import { DATABASE_FILE } from '../core/db.ts';
import { readMigrations } from '../core/migrations.ts';
import { PRODUCTION_KEY_FILE } from '../core/signer.ts';
import { LOCAL_KEK_FILE } from '../core/secrets/store-kek.ts';
import { MANIFEST_FILE, PUBLIC_KEYS_FILE, checkManifestFiles, readManifest } from './backup-manifest.ts';
import type { BackupManifest } from './backup-manifest.ts';
import { fillEmptyFolder, fsyncPath, isAbsentOrEmptyDir } from './fill-folder.ts';
import { AdminRefusal } from './refusal.ts';
import { storeJwks, storedProductionKeys } from './store-keys.ts';
import { verifyStore } from './verify-store.ts';
import type { CheckRow, StoreReport, VerifyStoreOptions } from './verify-store.ts';

const KEY_FILE = PRODUCTION_KEY_FILE.split(path.sep).join('/');

/** verify-store over a backup folder: a manifest row, then the store's own rows. */
export async function verifyBackup(dir: string, options: VerifyStoreOptions = {}): Promise<StoreReport & { manifest: BackupManifest | undefined }> {
  let manifest: BackupManifest | undefined;
  const problems: string[] = [];
  try {
    manifest = readManifest(dir);
    problems.push(...checkManifestFiles(dir, manifest));
    if (!manifest.files.some((f) => f.path === DATABASE_FILE)) problems.push(`the manifest does not list ${DATABASE_FILE}`);
  } catch (err) {
    problems.push((err as Error).message);
  }
  const manifestRow: CheckRow = {
    subject: 'manifest',
    checked: 'files, sizes, SHA-256, schema version, key files',
    count: `${manifest?.files.length ?? 0} files`,
    ok: problems.length === 0,
    detail: problems[0] ?? '',
  };
  const file = path.join(dir, DATABASE_FILE);
  if (!fs.existsSync(file)) {
    manifestRow.ok = false;
    manifestRow.detail ||= `no ${DATABASE_FILE} in the backup`;
    return { ok: false, rows: [manifestRow], tenants: 0, records: 0, epochs: 0, manifest };
  }
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const laterProblem = schemaProblem(db, manifest) ?? keyFileProblem(dir, db, manifest);
    if (laterProblem && manifestRow.ok) Object.assign(manifestRow, { ok: false, detail: laterProblem });
    const report = await verifyStore(db, options);
    const rows = [manifestRow, ...report.rows];
    return { ...report, ok: rows.every((r) => r.ok), rows, manifest };
  } finally {
    db.close();
  }
}

/**
 * The schema the database itself records: the manifest's, and not newer than this release
 * knows (a newer release's tables and rows may mean what this one cannot check or serve).
 */
function schemaProblem(db: Database.Database, manifest: BackupManifest | undefined): string | undefined {
  const version = db.prepare<[], { v: number | null }>('SELECT max(version) AS v FROM schema_migrations').get()?.v ?? 0;
  const newest = readMigrations().at(-1)?.version ?? 0;
  if (version > newest) return `the database's schema version ${version} is newer than this release's ${newest}: restore it with the release that wrote it, or a newer one`;
  if (manifest && manifest.schema_version !== version) return `the manifest says schema version ${manifest.schema_version}, the database records ${version}`;
  return undefined;
}

/** The public JWKS file must be the store's keys, and an included private key its active one. */
function keyFileProblem(dir: string, db: Database.Database, manifest: BackupManifest | undefined): string | undefined {
  if (manifest?.files.some((f) => f.path === PUBLIC_KEYS_FILE)) {
    const listed = JSON.parse(fs.readFileSync(path.join(dir, PUBLIC_KEYS_FILE), 'utf8')) as unknown;
    if (JSON.stringify(listed) !== JSON.stringify(storeJwks(db))) return `${PUBLIC_KEYS_FILE} is not the key set the database records`;
  }
  const keyFile = path.join(dir, PRODUCTION_KEY_FILE);
  if (!fs.existsSync(keyFile)) return undefined;
  let kid: string;
  try {
    const spki = createPublicKey(createPrivateKey(fs.readFileSync(keyFile))).export({ format: 'der', type: 'spki' });
    kid = keyId(new Uint8Array(spki.subarray(spki.length - 32)));
  } catch {
    return `${KEY_FILE} is not a PKCS#8 Ed25519 private key`;
  }
  const active = storedProductionKeys(db).find((k) => !k.retired);
  return active?.keyId === kid ? undefined : `${KEY_FILE} holds key ${kid}, the database's active production key is ${active?.keyId ?? 'none'}`;
}

export interface RestoreResult {
  restored: boolean;
  report: StoreReport;
  manifest: BackupManifest | undefined;
}

/** Restores `from` into `dataDir` (absent or empty) when it verifies; otherwise writes nothing. */
export async function restoreBackup(from: string, dataDir: string, options: VerifyStoreOptions = {}): Promise<RestoreResult> {
  const target = path.resolve(dataDir);
  if (!isAbsentOrEmptyDir(target)) throw new AdminRefusal(`the data directory ${target} is not empty: restore only into an empty or absent directory`);
  if (!fs.existsSync(path.join(from, DATABASE_FILE)) && !fs.existsSync(path.join(from, MANIFEST_FILE))) {
    throw new AdminRefusal(`${path.resolve(from)} is not a backup folder (no MANIFEST.json, no ${DATABASE_FILE})`);
  }
  return fillEmptyFolder<RestoreResult>(target, [DATABASE_FILE], async (staging) => {
    // Everything the manifest may list; the checks then run on these copies.
    for (const name of [DATABASE_FILE, PUBLIC_KEYS_FILE, KEY_FILE, LOCAL_KEK_FILE, MANIFEST_FILE]) {
      const source = path.join(from, name);
      if (!fs.existsSync(source)) continue;
      fs.mkdirSync(path.dirname(path.join(staging, name)), { recursive: true, mode: 0o700 });
      fs.copyFileSync(source, path.join(staging, name), fs.constants.COPYFILE_EXCL);
      fs.chmodSync(path.join(staging, name), 0o600);
    }
    const verified = await verifyBackup(staging, options);
    if (!verified.ok) return { commit: false, value: { restored: false, report: verified, manifest: verified.manifest } };
    // The data directory holds the database and keys/, as the service lays them out.
    for (const name of [MANIFEST_FILE, PUBLIC_KEYS_FILE]) fs.rmSync(path.join(staging, name), { force: true });
    fsyncPath(path.join(staging, DATABASE_FILE));
    return { commit: true, value: { restored: true, report: verified, manifest: verified.manifest } };
  });
}
