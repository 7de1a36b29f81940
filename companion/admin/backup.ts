/**
 * `svc-admin backup`: a consistent copy of the SQLite store while the service keeps serving.
 *
 * The copy is made with SQLite's online backup API (better-sqlite3's `db.backup()`,
 * https://www.sqlite.org/backup.html), every page in one step: one step reads inside one read
 * transaction, so the copy is the database as of one commit, and in WAL mode that reader never
 * blocks the service's writer. (Copying in several steps would restart whenever the service
 * commits in between, which under steady load may be forever.)
 *
 * The folder holds the database (switched to rollback-journal mode, so it is one
 * self-contained file that can be read without writing beside it), the store's public keys as
 * a JWKS, the production private key only when asked (`includeKeys`), and MANIFEST.json, moved
 * in last (./fill-folder.ts): a folder with a manifest is a whole backup. Mode 0700 with files
 * 0600: the database holds API-key hashes and every tenant's records, and perhaps the key.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Db } from '../core/db.ts';
import { DATABASE_FILE } from '../core/db.ts';
import { PRODUCTION_KEY_FILE } from '../core/signer.ts';
import { LOCAL_KEK_FILE } from '../core/secrets/store-kek.ts';
import { SERVICE_VERSION } from '../core/version.ts';
import { signedHeader } from '../anchoring/epochs.ts';
import { createSqliteAnchoringStore } from '../anchoring/sqlite-store.ts';
import { BACKUP_FORMAT, MANIFEST_FILE, PUBLIC_KEYS_FILE, fileEntry } from './backup-manifest.ts';
import type { BackupManifest } from './backup-manifest.ts';
import { fillEmptyFolder, fsyncPath, isAbsentOrEmptyDir } from './fill-folder.ts';
import { AdminRefusal } from './refusal.ts';
import { storeJwks } from './store-keys.ts';

/** Pages per backup step: all of them (sqlite3_backup_step's page count is an int). */
const ALL_PAGES = 0x7fffffff;

export interface BackupOptions {
  dataDir: string;
  /** The backup folder to create: absent or empty. */
  out: string;
  /** Copy keys/production-ed25519.pem too (a new machine then signs with the same key id). */
  includeKeys: boolean;
  now?: () => Date;
}

export async function backupStore(options: BackupOptions): Promise<BackupManifest> {
  const source = path.join(options.dataDir, DATABASE_FILE);
  if (!fs.existsSync(source)) throw new AdminRefusal(`no database at ${source}: is SVC_DATA_DIR (--data-dir) the service's?`);
  const keyFile = path.join(options.dataDir, PRODUCTION_KEY_FILE);
  if (options.includeKeys && !fs.existsSync(keyFile)) throw new AdminRefusal(`--include-keys: no key file at ${keyFile} (a key held by PKCS#11 or KMS stays there; back it up where it lives)`);
  const out = path.resolve(options.out);
  if (!isAbsentOrEmptyDir(out)) throw new AdminRefusal(`${out} exists and is not an empty folder: choose a new backup folder`);

  return fillEmptyFolder(out, [MANIFEST_FILE], async (staging) => {
    const live = new Database(source, { fileMustExist: true });
    try {
      live.pragma('busy_timeout = 5000');
      await live.backup(path.join(staging, DATABASE_FILE), { progress: () => ALL_PAGES });
    } finally {
      live.close();
    }
    // Inside the 0700 folder from the start; the file itself private too.
    fs.chmodSync(path.join(staging, DATABASE_FILE), 0o600);
    const copy = new Database(path.join(staging, DATABASE_FILE), { fileMustExist: true });
    let described: ReturnType<typeof describe>;
    let jwks: unknown;
    try {
      // One file, readable read-only: no -wal or -shm beside it (https://www.sqlite.org/wal.html).
      copy.pragma('journal_mode = DELETE');
      described = describe(copy);
      jwks = storeJwks(copy);
    } finally {
      copy.close();
    }
    writePrivate(path.join(staging, PUBLIC_KEYS_FILE), `${JSON.stringify(jwks, null, 2)}\n`);
    const files = [DATABASE_FILE, PUBLIC_KEYS_FILE];
    if (options.includeKeys) {
      fs.mkdirSync(path.join(staging, 'keys'), { mode: 0o700 });
      writePrivate(path.join(staging, PRODUCTION_KEY_FILE), fs.readFileSync(keyFile));
      files.push(PRODUCTION_KEY_FILE.split(path.sep).join('/'));
      // The service's own key-encryption key, when it has one (no SVC_STORE_KEK_REF): without
      // it the restored store's minted webhook signing keys would not open.
      const kekFile = path.join(options.dataDir, LOCAL_KEK_FILE);
      if (fs.existsSync(kekFile)) {
        writePrivate(path.join(staging, LOCAL_KEK_FILE), fs.readFileSync(kekFile));
        files.push(LOCAL_KEK_FILE);
      }
    }
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      created_at: (options.now ?? (() => new Date()))().toISOString(),
      service_version: SERVICE_VERSION,
      schema_version: described.schema_version,
      private_key_included: options.includeKeys,
      files: files.map((f) => fileEntry(staging, f)),
      counts: described.counts,
      last_epoch: described.last_epoch,
    };
    writePrivate(path.join(staging, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    for (const f of [...files, MANIFEST_FILE]) fsyncPath(path.join(staging, f));
    return { commit: true, value: manifest };
  });
}

/** Schema version, counts and the newest signed epoch, read from the copy itself. */
function describe(db: Db) {
  const version = db.prepare<[], { v: number | null }>('SELECT max(version) AS v FROM schema_migrations').get()?.v ?? 0;
  const count = (sql: string) => db.prepare<[], { n: number }>(sql).get()!.n;
  const last = createSqliteAnchoringStore(db).lastEpoch();
  return {
    schema_version: version,
    counts: {
      tenants: count('SELECT count(*) AS n FROM tenants'),
      records: count('SELECT count(*) AS n FROM sealed_records'),
      epochs: count('SELECT count(*) AS n FROM epochs'),
    },
    last_epoch: last
      ? {
          epoch_seq: last.epochSeq,
          canonical_root: last.canonicalRoot,
          epoch_digest: last.epochDigest,
          epoch_log: signedHeader(last).header.epoch_log,
          signed_header: signedHeader(last),
        }
      : null,
  };
}

/** Created 0600 from the start: never readable by others, even for a moment. */
export function writePrivate(file: string, data: string | Uint8Array): void {
  fs.writeFileSync(file, data, { mode: 0o600, flag: 'wx' });
}
