/** WAL checkpoints run in a worker thread with its own connection, off the request path. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BACKSTOP_AUTOCHECKPOINT_PAGES, Checkpointer } from '../../companion/core/checkpointer.ts';
import { openDatabase, pragmaValue } from '../../companion/core/db.ts';
import { createMemoryLogger } from '../../companion/core/log.ts';
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
