/**
 * The admin command line, `svc-admin` (package bin; compiled to dist/companion/cli/svc-admin.js):
 * backup, verify-store and restore of the service's store, and rewrap-secrets. It reads the same settings as the
 * service, from the same variables and flags (core/config.ts SETTINGS), so SVC_DATA_DIR or
 * --data-dir names the same data directory for both.
 *
 * Exit codes: 0 done and verified; 1 verification failed or the work failed (restore then
 * wrote nothing); 2 bad usage or refused before starting (one line on stderr).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import type { TrustedKeySet } from '../../shared/trusted-keys.ts';
import { ConfigError, SETTINGS, loadConfig, settingsHelp } from '../core/config.ts';
import type { Config, Setting } from '../core/config.ts';
import { DATABASE_FILE } from '../core/db.ts';
import { SERVICE_VERSION } from '../core/version.ts';
import { backupStore } from '../admin/backup.ts';
import { AdminRefusal } from '../admin/refusal.ts';
import { restoreBackup, verifyBackup } from '../admin/restore.ts';
import { reportTable, verifyStore } from '../admin/verify-store.ts';
import { rewrapSecrets } from '../admin/rewrap-secrets.ts';
import type { StoreReport } from '../admin/verify-store.ts';

export const USAGE = `usage: svc-admin <command> [options] [settings]

commands:
  backup --out <folder> [--include-keys]
        a consistent copy of the SQLite store while the service serves (SQLite's online
        backup), with the public keys and MANIFEST.json (sizes, SHA-256, schema version, the
        last signed epoch checkpoint). --include-keys adds the production private key
        (keys/production-ed25519.pem), so a new machine signs with the same key id, and the
        service's own key-encryption key (store-kek.key, when SVC_STORE_KEK_REF is unset),
        without which the restored minted webhook signing keys do not open.
  verify-store [--from <folder>] [--keys <jwks.json>]
        walks every tenant chain and log and every epoch, recomputing roots and digests and
        checking signatures and checkpoints; prints one table. --from checks a backup folder
        (its manifest too) instead of the configured store. --keys trusts a published JWKS
        (/.well-known/service-keys.json saved earlier) instead of the store's own key rows.
  restore <folder> [--keys <jwks.json>]
        restores a backup into the configured data directory, which must be empty or absent,
        after its manifest and verify-store pass; otherwise writes nothing.
  rewrap-secrets
        re-seals every secret the store holds (the minted webhook signing keys) under the
        current key-encryption key, SVC_STORE_KEK_REF (or the local store-kek.key), opening
        each with the KEK that sealed it (SVC_STORE_KEK_PREVIOUS_REFS, store-kek.key); safe
        while the service serves; SQLite and PostgreSQL alike.

options:
  -h, --help     print this help and exit
  -v, --version  print the version and exit

PostgreSQL (SVC_DATABASE_URL): back up with pg_dump -Fc, restore with pg_restore, then start the
service once (it applies any newer migrations); verify-store reads the SQLite store only.

settings (the service's own; variable, flag, default, meaning):
${settingsHelp()}
`;

const ADMIN_OPTIONS = {
  out: { type: 'string' },
  'include-keys': { type: 'boolean' },
  from: { type: 'string' },
  keys: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

const COMMANDS = ['backup', 'verify-store', 'restore', 'rewrap-secrets'] as const;
type Command = (typeof COMMANDS)[number];
/** Which admin options each command takes. */
const ALLOWED: Record<Command, readonly string[]> = { backup: ['out', 'include-keys'], 'verify-store': ['from', 'keys'], restore: ['keys'], 'rewrap-secrets': [] };

export const PG_DUMP_ROUTE = `SVC_DATABASE_URL is set: this store is PostgreSQL. Back it up with pg_dump -Fc "$SVC_DATABASE_URL" -f gate.dump (or your platform's snapshots), restore with pg_restore --no-owner -d "$SVC_DATABASE_URL" gate.dump into an empty database, then start the service once; see the README, "Backup and restore"`;

interface Parsed {
  command: Command;
  positional: string | undefined;
  admin: { out?: string; includeKeys: boolean; from?: string; keys?: string };
  config: Config;
}

type Io = { out: (s: string) => void; err: (s: string) => void };

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env, io: Io = { out: (s) => console.log(s), err: (s) => console.error(s) }): Promise<number> {
  let parsed: Parsed | 'help' | 'version';
  try {
    parsed = parse(argv, env);
  } catch (err) {
    if (err instanceof AdminRefusal) {
      io.err(`svc-admin: ${err.message} (see --help)`);
      return 2;
    }
    throw err;
  }
  if (parsed === 'help') return io.out(USAGE), 0;
  if (parsed === 'version') return io.out(`svc-admin ${SERVICE_VERSION}`), 0;
  try {
    return await run(parsed, io);
  } catch (err) {
    if (err instanceof AdminRefusal) {
      io.err(`svc-admin: ${err.message}`);
      return 2;
    }
    io.err(`svc-admin: ${parsed.command} failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

function parse(argv: string[], env: NodeJS.ProcessEnv): Parsed | 'help' | 'version' {
  const options: Record<string, { type: 'string' } | { type: 'boolean'; short?: string }> = { ...ADMIN_OPTIONS };
  const settingFlags = (SETTINGS as readonly Setting[]).flatMap((s) => (s.flag ? [s.flag] : []));
  for (const flag of settingFlags) options[flag] = { type: 'string' };
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: argv, options, strict: true, allowPositionals: true }));
  } catch (err) {
    // util.parseArgs names the offending argument.
    throw new AdminRefusal((err as Error).message);
  }
  if (values.help) return 'help';
  if (values.version) return 'version';
  const [command, positional, ...extra] = positionals;
  if (command === undefined) throw new AdminRefusal(`expected a command: ${COMMANDS.join(', ')}`);
  if (!(COMMANDS as readonly string[]).includes(command)) throw new AdminRefusal(`unknown command ${JSON.stringify(command)}: expected one of ${COMMANDS.join(', ')}`);
  const cmd = command as Command;
  if (extra.length > 0 || (positional !== undefined && cmd !== 'restore')) throw new AdminRefusal(`${cmd}: unexpected argument ${JSON.stringify(cmd === 'restore' ? extra[0] : positional)}`);
  if (cmd === 'restore' && positional === undefined) throw new AdminRefusal('restore: expected the backup folder, e.g. svc-admin restore /backups/gate-2026-11-28');
  for (const name of Object.keys(ADMIN_OPTIONS)) {
    if (values[name] !== undefined && !ALLOWED[cmd].includes(name)) throw new AdminRefusal(`${cmd} does not take --${name}`);
  }
  if (cmd === 'backup' && !values.out) throw new AdminRefusal('backup: --out <folder> is required');
  for (const name of ['out', 'from', 'keys']) {
    if (values[name] === '') throw new AdminRefusal(`--${name} must not be empty`);
  }

  const settingsArgv = settingFlags.filter((f) => typeof values[f] === 'string').map((f) => `--${f}=${values[f] as string}`);
  let config: Config;
  try {
    config = loadConfig(env, settingsArgv);
  } catch (err) {
    if (err instanceof ConfigError) throw new AdminRefusal(`invalid configuration: ${err.problems.join('; ')}`);
    throw err;
  }
  return {
    command: cmd,
    positional,
    admin: { out: values.out as string | undefined, includeKeys: values['include-keys'] === true, from: values.from as string | undefined, keys: values.keys as string | undefined },
    config,
  };
}

async function run(p: Parsed, io: Io): Promise<number> {
  const keys = p.admin.keys === undefined ? undefined : readKeys(p.admin.keys);
  const onPostgres = p.config.databaseUrl !== undefined;
  switch (p.command) {
    case 'backup': {
      if (onPostgres) throw new AdminRefusal(PG_DUMP_ROUTE);
      const manifest = await backupStore({ dataDir: p.config.dataDir, out: p.admin.out!, includeKeys: p.admin.includeKeys });
      const out = path.resolve(p.admin.out!);
      const last = manifest.last_epoch;
      io.out(`backup written to ${out}: ${manifest.counts.tenants} tenants, ${manifest.counts.records} records, ${manifest.counts.epochs} epochs; schema ${manifest.schema_version}`);
      io.out(last ? `last epoch ${last.epoch_seq}: epoch log size ${last.epoch_log.size}, root ${last.epoch_log.root}` : 'no epoch has closed yet');
      io.out(p.admin.includeKeys ? `it holds the production PRIVATE key (${out}/keys) and any store-kek.key: keep it as secret as the data directory` : 'the production private key and store-kek.key are not in it (add --include-keys to move the service to a new machine with the same key id and its sealed webhook signing keys)');
      io.out(`check it: svc-admin verify-store --from ${out}`);
      return 0;
    }
    case 'verify-store': {
      if (p.admin.from !== undefined) return printReport(await verifyBackup(path.resolve(p.admin.from), { keys }), io);
      if (onPostgres) throw new AdminRefusal('verify-store reads the SQLite store only; with SVC_DATABASE_URL, restore a pg_dump into a scratch database and check it with the service (see the README, "Backup and restore")');
      const file = path.join(p.config.dataDir, DATABASE_FILE);
      if (!fs.existsSync(file)) throw new AdminRefusal(`no database at ${file}: is SVC_DATA_DIR (--data-dir) the service's?`);
      const db = new Database(file, { readonly: true, fileMustExist: true });
      try {
        db.pragma('busy_timeout = 5000');
        return printReport(await verifyStore(db, { keys }), io);
      } finally {
        db.close();
      }
    }
    case 'restore': {
      if (onPostgres) throw new AdminRefusal(PG_DUMP_ROUTE);
      const result = await restoreBackup(path.resolve(p.positional!), p.config.dataDir, { keys });
      const code = printReport(result.report, io);
      if (!result.restored) {
        io.err('svc-admin: restore refused: the backup failed verification; nothing was written');
        return 1;
      }
      io.out(`restored into ${p.config.dataDir}${result.manifest?.private_key_included ? ' with the production key' : ' (no private key in the backup: the service makes a new production key; the old one stays published as retired)'}`);
      return code;
    }
    case 'rewrap-secrets': {
      const r = await rewrapSecrets(p.config);
      io.out(`re-sealed ${r.resealed} stored secret(s) under ${r.current.kekId} (${r.current.source})`);
      io.out(`stored webhook signing keys per key-encryption key: ${r.counts.map((c) => `${c.kekId ?? 'clear'} ${c.count}`).join(', ') || 'none stored'}`);
      const others = r.counts.filter((c) => c.kekId !== r.current.kekId);
      const earlier = r.current.source === 'SVC_STORE_KEK_REF' ? 'SVC_STORE_KEK_PREVIOUS_REFS and the local store-kek.key' : 'SVC_STORE_KEK_PREVIOUS_REFS';
      io.out(others.length === 0 ? `nothing is left under any other key: ${earlier} may now be removed` : 'some values are still under another key: run again');
      return others.length === 0 ? 0 : 1;
    }
  }
}

function printReport(report: StoreReport, io: Io): number {
  io.out(reportTable(report.rows));
  const failed = report.rows.filter((r) => !r.ok).length;
  io.out(failed === 0
    ? `verified: ${report.tenants} tenants, ${report.records} records, ${report.epochs} epochs`
    : `FAILED: ${failed} of ${report.rows.length} rows (${report.tenants} tenants, ${report.records} records, ${report.epochs} epochs)`);
  return failed === 0 ? 0 : 1;
}

function readKeys(file: string): TrustedKeySet {
  try {
    return trustedKeySet(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch {
    throw new AdminRefusal(`--keys ${file}: expected a readable JWKS file (/.well-known/service-keys.json)`);
  }
}
