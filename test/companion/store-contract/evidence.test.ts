/**
 * The sealed records (evidence capability) behave the same on SQLite and PostgreSQL; on
 * PostgreSQL, concurrent sealers of one tenant append a gapless chain (logHead's tenant lock).
 */
import { describe, expect, it } from 'vitest';
import { createPostgresEvidenceStore } from '../../../companion/evidence/postgres-store.ts';
import { createSqliteEvidenceStore } from '../../../companion/evidence/sqlite-store.ts';
import type { EvidenceStore, LogHead, SealedRecordRow } from '../../../companion/evidence/store.ts';
import { sha256Hex } from '../../../shared/hash.ts';
import { databasePerCase, engines, latch, lockWaitBefore, seedTenants, sleep } from './engines.ts';
import type { StoreFactories } from './engines.ts';

const EVIDENCE: StoreFactories<EvidenceStore> = { sqlite: createSqliteEvidenceStore, postgres: createPostgresEvidenceStore };
const AT = '2025-01-01T00:00:00.000Z';

let actions = 0;
/** A record of `tenantId` at `seq`; each call gets its own action key. */
function record(tenantId: string, seq: number, over: Partial<SealedRecordRow> = {}): SealedRecordRow {
  return {
    tenantId,
    tenantSeq: seq,
    actionKey: `hr:approve:${tenantId}-${seq}-${++actions}`,
    vertical: 'hr',
    pack: 'hr-core',
    kind: 'decision',
    decision: 'allow',
    status: 'sealed',
    reviewRoute: null,
    payloadHash: sha256Hex(`payload ${seq}`),
    packetHash: sha256Hex(`packet ${seq}`),
    attestation: JSON.stringify({ tenant_id: tenantId, tenant_seq: seq }),
    attestationHash: sha256Hex(`${tenantId}/${seq}/${actions}`),
    signature: `sig-${seq}`,
    keyId: 'key-1',
    devKey: false,
    recordedAt: `2025-01-01T00:00:${String(seq).padStart(2, '0')}.000Z`,
    credits: 3,
    details: '{"next_step":"none"}',
    ...over,
  };
}

const headOf = (r: SealedRecordRow): LogHead => ({ tenantSeq: r.tenantSeq, attestationHash: r.attestationHash, recordedAt: r.recordedAt });

describe.each(engines())('evidence store on $name', (engine) => {
  const db = databasePerCase(engine, (fresh) => seedTenants(fresh, ['ten_a', 'ten_b'], AT));

  const seqs = async (tenantId: string) =>
    (await db.rows<{ tenant_seq: number }>('SELECT tenant_seq FROM sealed_records WHERE tenant_id = ? ORDER BY tenant_seq', tenantId)).map((r) => r.tenant_seq);

  it('stores a record field for field and finds it by tenant and action key only', async () => {
    const evidence = db.store(EVIDENCE);
    const plain = record('ten_a', 0);
    const dev = record('ten_a', 1, { decision: null, reviewRoute: 'hr-leads', devKey: true, credits: 0, status: 'pending_review' });
    await evidence.insertRecord(plain);
    await evidence.insertRecord(dev);
    expect(await evidence.findRecord('ten_a', plain.actionKey)).toStrictEqual(plain);
    expect(await evidence.findRecord('ten_a', dev.actionKey)).toStrictEqual(dev);
    // Another tenant's record is simply not found; nor is an unknown key.
    expect(await evidence.findRecord('ten_b', plain.actionKey)).toBeUndefined();
    expect(await evidence.findRecord('ten_a', 'hr:approve:missing')).toBeUndefined();
    const [raw] = await db.rows<{ dev_key: number; credits: number }>('SELECT dev_key, credits FROM sealed_records WHERE action_key = ?', dev.actionKey);
    expect(raw).toEqual({ dev_key: 1, credits: 0 });
  });

  it('answers the log head: undefined when empty, then the highest tenant_seq of that tenant alone', async () => {
    const evidence = db.store(EVIDENCE);
    expect(await evidence.logHead('ten_a')).toBeUndefined();
    const r0 = record('ten_a', 0);
    const r2 = record('ten_a', 2);
    const r1 = record('ten_a', 1);
    // Inserted out of order: the head follows tenant_seq, not insertion.
    for (const r of [r0, r2, r1]) await evidence.insertRecord(r);
    expect(await evidence.logHead('ten_a')).toStrictEqual(headOf(r2));
    expect(await evidence.logHead('ten_b')).toBeUndefined();
    const b0 = record('ten_b', 0);
    await evidence.insertRecord(b0);
    expect(await evidence.logHead('ten_b')).toStrictEqual(headOf(b0));
    expect(await evidence.logHead('ten_a')).toStrictEqual(headOf(r2));
    expect(await evidence.logHead('ten_missing')).toBeUndefined();
  });

  it('refuses a second record at one tenant_seq, a repeated action key, and an unknown tenant', async () => {
    const evidence = db.store(EVIDENCE);
    const first = record('ten_a', 0);
    await evidence.insertRecord(first);
    await expect(evidence.insertRecord(record('ten_a', 0))).rejects.toThrow();
    await expect(evidence.insertRecord(record('ten_b', 0, { actionKey: first.actionKey }))).rejects.toThrow();
    await expect(evidence.insertRecord(record('ten_missing', 0))).rejects.toThrow();
    await expect(evidence.insertRecord(record('ten_a', -1))).rejects.toThrow();
    // The same seq under another tenant is that tenant's own log.
    await evidence.insertRecord(record('ten_b', 0));
    expect(await seqs('ten_a')).toEqual([0]);
    expect(await seqs('ten_b')).toEqual([0]);
  });

  it('reads its own writes inside a transaction, and rolls them back with it', async () => {
    const r0 = record('ten_a', 0);
    const r1 = record('ten_a', 1);
    await db.store(EVIDENCE).insertRecord(r0);
    await expect(
      db.transaction(async (tx) => {
        const evidence = tx.store(EVIDENCE);
        expect(await evidence.logHead('ten_a')).toStrictEqual(headOf(r0));
        await evidence.insertRecord(r1);
        expect(await evidence.logHead('ten_a')).toStrictEqual(headOf(r1));
        expect(await evidence.findRecord('ten_a', r1.actionKey)).toStrictEqual(r1);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    const evidence = db.store(EVIDENCE);
    expect(await evidence.logHead('ten_a')).toStrictEqual(headOf(r0));
    expect(await evidence.findRecord('ten_a', r1.actionKey)).toBeUndefined();
  });

  it('rolls back a refused seal (savepoint) alone, keeping the rest of the batch', async () => {
    const r0 = record('ten_a', 0);
    const refused = record('ten_a', 1);
    const r1 = record('ten_a', 1);
    await db.transaction(async (tx) => {
      await tx.transaction(async (sp) => {
        const head = await sp.store(EVIDENCE).logHead('ten_a');
        expect(head).toBeUndefined();
        await sp.store(EVIDENCE).insertRecord(r0);
      });
      await expect(
        tx.transaction(async (sp) => {
          const head = await sp.store(EVIDENCE).logHead('ten_a');
          await sp.store(EVIDENCE).insertRecord({ ...refused, tenantSeq: head!.tenantSeq + 1 });
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      await tx.transaction(async (sp) => {
        const head = await sp.store(EVIDENCE).logHead('ten_a');
        expect(head).toStrictEqual(headOf(r0));
        await sp.store(EVIDENCE).insertRecord(r1);
      });
    });
    const evidence = db.store(EVIDENCE);
    expect(await seqs('ten_a')).toEqual([0, 1]);
    expect(await evidence.findRecord('ten_a', refused.actionKey)).toBeUndefined();
    expect(await evidence.logHead('ten_a')).toStrictEqual(headOf(r1));
  });

  if (engine.name === 'postgres') describe('concurrent sealers', () => {
    /**
     * One sealer's transaction: read the head, `hold` (so that two overlap), append head + 1
     * chained to the head's hash. `nested` does it in a savepoint, as the sealer does.
     */
    const seal = (tenantId: string, hold: () => Promise<void>, nested: boolean) =>
      db.transaction(async (outer) => {
        const body = async (tx: typeof outer) => {
          const evidence = tx.store(EVIDENCE);
          const head = await evidence.logHead(tenantId);
          await hold();
          const r = record(tenantId, head ? head.tenantSeq + 1 : 0, { attestation: JSON.stringify({ prev: head?.attestationHash ?? null }) });
          await evidence.insertRecord(r);
          return { head, r };
        };
        return nested ? outer.transaction(body) : body(outer);
      });

    for (const nested of [false, true]) {
      it(`two transactions sealing one tenant both commit, seqs 0 and 1, chained${nested ? ' (in savepoints)' : ''}`, async () => {
        // The first to read the head holds it until the other is seen waiting for its lock.
        let nobodyHolds = true;
        const holdTheFirst = async () => {
          if (!nobodyHolds) return;
          nobodyHolds = false;
          await lockWaitBefore(db);
        };
        const results = await Promise.all([seal('ten_a', holdTheFirst, nested), seal('ten_a', holdTheFirst, nested)]);
        expect(await seqs('ten_a')).toEqual([0, 1]);
        const first = results.find((x) => x.head === undefined)!;
        const second = results.find((x) => x.head !== undefined)!;
        expect(first.r.tenantSeq).toBe(0);
        expect(second.head).toStrictEqual(headOf(first.r));
        expect(second.r.tenantSeq).toBe(1);
        const stored = await db.store(EVIDENCE).findRecord('ten_a', second.r.actionKey);
        expect(JSON.parse(stored!.attestation)).toEqual({ prev: first.r.attestationHash });
      });
    }

    it('four transactions sealing one tenant twice each leave a gapless chain of eight', async () => {
      const sealTwice = () =>
        db.transaction(async (tx) => {
          for (let i = 0; i < 2; i++) {
            await tx.transaction(async (sp) => {
              const evidence = sp.store(EVIDENCE);
              const head = await evidence.logHead('ten_a');
              await sleep(20);
              await evidence.insertRecord(record('ten_a', head ? head.tenantSeq + 1 : 0));
            });
          }
        });
      await Promise.all([sealTwice(), sealTwice(), sealTwice(), sealTwice()]);
      expect(await seqs('ten_a')).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    });

    it('a sealer of another tenant does not wait for the first tenant\'s lock', async () => {
      const finished: string[] = [];
      const holdsTenA = latch();
      const released = latch();
      const holdTenA = async () => {
        holdsTenA.open();
        await released.opened;
      };
      const a = seal('ten_a', holdTenA, false).then(() => finished.push('ten_a'));
      await Promise.race([holdsTenA.opened, a]);
      const b = seal('ten_b', async () => {}, false).then(() => finished.push('ten_b'));
      // Should ten_b wait for ten_a's lock after all, ten_a is let go and the order shows it.
      await lockWaitBefore(db, b);
      released.open();
      await Promise.all([a, b]);
      expect(finished).toEqual(['ten_b', 'ten_a']);
      expect(await seqs('ten_a')).toEqual([0]);
      expect(await seqs('ten_b')).toEqual([0]);
    });

    it('reads the head on the pool without waiting for a sealer holding the tenant', async () => {
      const r0 = record('ten_a', 0);
      await db.store(EVIDENCE).insertRecord(r0);
      const seen = await db.transaction(async (tx) => {
        await tx.store(EVIDENCE).logHead('ten_a');
        await tx.store(EVIDENCE).insertRecord(record('ten_a', 1));
        // On another connection while this transaction holds the tenant's row: a locking read
        // there would wait for this commit, which waits for it (seen as a lock wait).
        const read = db.store(EVIDENCE).logHead('ten_a');
        return (await lockWaitBefore(db, read)) ? ('waited' as const) : read;
      });
      expect(seen).toStrictEqual(headOf(r0));
    });
  });
});
