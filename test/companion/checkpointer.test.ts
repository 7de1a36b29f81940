/** WAL checkpoints run in a worker thread with its own connection, off the request path and off the seals. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { signUpSandbox } from '../../companion/account/signup.ts';
import { BACKSTOP_AUTOCHECKPOINT_PAGES, Checkpointer } from '../../companion/core/checkpointer.ts';
import { loadConfig } from '../../companion/core/config.ts';
import { openDatabase, pragmaValue } from '../../companion/core/db.ts';
import { createMemoryLogger } from '../../companion/core/log.ts';
import { closeDeps, openSqliteDeps } from '../../companion/deps.ts';
import type { SealRequest } from '../../companion/evidence/sealer.ts';
import { sha256Hex } from '../../shared/hash.ts';
import { makeTempDir } from './helpers.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

async function until(condition: () => boolean, what: string): Promise<void> {
  // Bounded wait for background work; the bound is a safety net, not a performance claim.
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!condition()) throw new Error(`gave up waiting for ${what}`);
}

describe('Checkpointer', () => {
  it('checkpoints the WAL from its worker, raises the writer backstop, and closes first on stop', async () => {
    const dir = makeTempDir('svc-ckpt-');
    dirs.push(dir);
    const file = path.join(dir, 'c.db');
    const db = openDatabase(file);
    const log = createMemoryLogger();
    const ckpt = new Checkpointer(db, { intervalMs: 20, log });
    expect(pragmaValue(db, 'wal_autocheckpoint')).toBe(BACKSTOP_AUTOCHECKPOINT_PAGES);
    db.exec('CREATE TABLE t (x BLOB)');
    const insert = db.prepare('INSERT INTO t VALUES (randomblob(2000))');
    for (let i = 0; i < 200; i++) insert.run();

    ckpt.start();
    await until(() => ckpt.stats().lastCheckpointedFrames > 0, 'a checkpoint with frames');
    const s = ckpt.stats();
    expect(s.runs).toBeGreaterThan(0);
    expect(s.lastCheckpointedFrames).toBe(s.lastLogFrames);
    expect(log.entries.filter((e) => e.level !== 'info')).toEqual([]);

    await ckpt.stop();
    db.close();
    // The writer closed last, so SQLite checkpointed and removed the WAL (no reader left).
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
  });
});

/** Frames in a WAL file of 4 KiB pages (sqlite.org/fileformat2.html §4.1: a 32-byte header, then 24-byte frame headers). */
function walFrames(file: string): number {
  const size = fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0;
  return size <= 32 ? 0 : (size - 32) / (4096 + 24);
}

describe('checkpoints and seals', () => {
  it('a seal batch on the sealing thread never checkpoints: with the checkpointer stopped the WAL grows past 1,000 pages, and the checkpointer brings it back', async () => {
    const dir = makeTempDir('svc-ckpt-seals-');
    dirs.push(dir);
    const log = createMemoryLogger();
    // The lifecycle is never started: the service's checkpoint worker does not run.
    const deps = await openSqliteDeps(loadConfig({ SVC_DATA_DIR: dir, SVC_SEAL_THREAD: '1' }, []), { log });
    let ckpt: Checkpointer | undefined;
    try {
      const { tenant } = await signUpSandbox({ tenants: deps.store.tenants, clock: deps.clock, ids: deps.ids }, 'checkpoints@example.com');
      let n = 0;
      // Plain data, so it is sealed on the sealing thread's connection.
      const request = (): SealRequest => ({
        auth: { tenantId: tenant.id, tenantKind: 'sandbox', keyId: 'key_test' },
        vertical: 'law',
        actionType: 'draft_reply',
        pack: 'law',
        kind: 'gate',
        decision: 'allow',
        status: 'allowed',
        reviewRoute: null,
        payloadHash: sha256Hex(`seal ${n++}`),
        manifestDigest: null,
        policyDigest: null,
        details: { filler: 'x'.repeat(3000) },
        metering: { counted: false, credits: 0 },
        respond: { template: { sealed: true } },
      });
      const file = deps.store.file;
      // SQLite's default (1,000 pages) would checkpoint inside the commit that crossed it, and
      // the next batch would start the WAL over: it could never pass 1,000 pages by more than a
      // batch. Bounded: each batch adds a few pages.
      for (let i = 0; i < 1500 && walFrames(file) <= 1100; i++) await Promise.all([deps.sealer.seal(request()), deps.sealer.seal(request())]);
      expect(walFrames(file)).toBeGreaterThan(1100);
      expect(deps.sealer.status?.()).toMatchObject({ name: 'seal-thread', running: true });

      ckpt = new Checkpointer(deps.store.db, { intervalMs: 20, log });
      ckpt.start();
      const c = ckpt;
      await until(() => c.stats().lastLogFrames > 1100 && c.stats().lastCheckpointedFrames === c.stats().lastLogFrames, 'the checkpointer to copy the whole WAL');
      // Once every frame is in the database file, the next batch starts the WAL over.
      await deps.sealer.seal(request());
      await until(() => c.stats().lastLogFrames > 0 && c.stats().lastLogFrames < 100, 'the WAL to start over');
      expect(log.entries.filter((e) => e.level === 'error')).toEqual([]);
    } finally {
      await ckpt?.stop();
      await closeDeps(deps);
    }
  });
});
