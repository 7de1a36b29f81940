/**
 * `svc-admin rewrap-secrets`: re-seals every secret the store holds (the minted webhook signing
 * keys, migration 0020) under the current key-encryption key, SVC_STORE_KEK_REF (or the local
 * key file when it is unset), opening each with whichever KEK sealed it: SVC_STORE_KEK_PREVIOUS_REFS
 * or the local key file. Run while the service serves: each key is replaced in one statement
 * that only matches the value read, and a service holding both KEKs opens either form.
 *
 * Rotation, in full: set SVC_STORE_KEK_REF to the new key and SVC_STORE_KEK_PREVIOUS_REFS to the
 * old one and restart; run this command with the same settings; then drop the old reference
 * and restart. The report says when nothing is left under any other KEK.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../core/config.ts';
import { DATABASE_FILE, openDatabase } from '../core/db.ts';
import { connect } from '../core/postgres/connect.ts';
import { SecretResolver, secretResolverOptions } from '../core/secret-refs.ts';
import { StoreKekError, openStoreCipher } from '../core/secrets/store-kek.ts';
import type { StoreCipher } from '../core/secrets/envelope.ts';
import { promised } from '../core/async-store.ts';
import { createSqliteWebhookStore } from '../webhooks/sqlite-store.ts';
import { createPostgresWebhookStore } from '../webhooks/postgres-store.ts';
import type { SealedKeyCount, WebhookStore } from '../webhooks/store.ts';
import { AdminRefusal } from './refusal.ts';

export interface RewrapReport {
  /** The KEK every value is now sealed under. */
  current: { kekId: string; source: string };
  resealed: number;
  /** Stored values per KEK id after the run (null: clear). */
  counts: SealedKeyCount[];
}

const NOT_MIGRATED = 'the store predates migration 0020 (sealed signing keys): start the service once on it, then run rewrap-secrets';

export async function rewrapSecrets(config: Config): Promise<RewrapReport> {
  const secrets = new SecretResolver(secretResolverOptions(config));
  let cipher: StoreCipher;
  try {
    cipher = await openStoreCipher(config, secrets);
  } catch (err) {
    if (err instanceof StoreKekError) throw new AdminRefusal(err.message);
    throw err;
  } finally {
    secrets.close();
  }
  const report = async (webhooks: WebhookStore): Promise<RewrapReport> => {
    const resealed = await webhooks.resealSigningKeys('not_current');
    return { current: { kekId: cipher.current.id, source: cipher.current.source }, resealed, counts: await webhooks.sealedKeyCounts() };
  };

  if (config.databaseUrl !== undefined) {
    const sql = connect(config.databaseUrl, { max: 1 });
    try {
      const [column] = await sql`SELECT 1 FROM information_schema.columns WHERE table_name = 'webhook_signing_keys' AND column_name = 'kek_id'`;
      if (!column) throw new AdminRefusal(NOT_MIGRATED);
      return await report(createPostgresWebhookStore(sql, cipher));
    } finally {
      await sql.end();
    }
  }
  const file = path.join(config.dataDir, DATABASE_FILE);
  if (!fs.existsSync(file)) throw new AdminRefusal(`no database at ${file}: is SVC_DATA_DIR (--data-dir) the service's?`);
  const db = openDatabase(file);
  try {
    const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('webhook_signing_keys')").all();
    if (!columns.some((c) => c.name === 'kek_id')) throw new AdminRefusal(NOT_MIGRATED);
    return await report(promised<WebhookStore>(createSqliteWebhookStore(db, cipher)));
  } finally {
    db.close();
  }
}
