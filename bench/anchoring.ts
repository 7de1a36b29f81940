/**
 * `npm run bench -- anchoring` (issue: anchoring). Every figure is a ratio to a baseline
 * measured in the same run:
 *   1. epoch close with 1,000 tenants holding new leaves, at 1e4 and at 1e6 stored records
 *      (target: close cost independent of the record count, ratio <= 1.5);
 *   2. an inclusion proof at 1e6 records, generated and verified, against one SHA-256 of 1 KB
 *      (target >= 0.3x);
 *   3. sealing throughput with the tenant-log participant against without it (target >= 0.9x);
 *   4. a batch package of 1,000 bundles over HTTP (JSON and tar) against building the bundles.
 * Records for (1) and (2) are written straight through the stores (record row + tenant-log
 * leaf, as the sealer would) in large transactions, so 1e6 of them take seconds, not hours.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EpochCloser } from '../companion/anchoring/epochs.ts';
import { InclusionProver } from '../companion/anchoring/inclusion.ts';
import { StoredTrees } from '../companion/anchoring/stored-tree.ts';
import { tenantLogParticipant } from '../companion/anchoring/tenant-log.ts';
import { createApp } from '../companion/app.ts';
import { generateApiKey } from '../companion/core/auth.ts';
import { ManualClock } from '../companion/core/clock.ts';
import { loadConfig } from '../companion/core/config.ts';
import { createMemoryLogger } from '../companion/core/log.ts';
import { closeDeps, openSqliteDeps } from '../companion/deps.ts';
import { sealParticipants } from '../companion/seal-participants.ts';
import type { AppDeps } from '../companion/deps.ts';
import { viewRecord } from '../companion/evidence/record-view.ts';
import { Sealer } from '../companion/evidence/sealer.ts';
import { webhookParticipant } from '../companion/webhooks/participant.ts';
import type { SealRequest } from '../companion/evidence/sealer.ts';
import { meteringParticipant } from '../companion/metering/participant.ts';
import { reviewsParticipant } from '../companion/reviews/participant.ts';
import type { SqliteStore, Tx } from '../companion/store.ts';
import { buildBundle } from '../shared/bundle.ts';
import { fromHex, toHex } from '../shared/encoding.ts';
import { sha256, sha256Hex } from '../shared/hash.ts';
import { leafHash, proofFromHex, verifyInclusion } from '../shared/merkle.ts';
import { seedProductionTenant } from './companion-gate.ts';
import { alternateRounds, gateRunner } from './gate-load.ts';
import { compare, line, measure, measureAsync, median, section } from './harness.ts';

const TENANTS = 1000;
const HOUR = 3600_000;

async function tempDeps(clock: ManualClock): Promise<AppDeps & { store: SqliteStore; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-anchoring-'));
  return { ...(await openSqliteDeps(loadConfig({ SVC_DATA_DIR: dir }, []), { clock, log: createMemoryLogger() })), dir };
}

/** Wall time of one run of fn, in milliseconds. */
async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

async function dispose(deps: AppDeps & { dir: string }): Promise<void> {
  await closeDeps(deps);
  fs.rmSync(deps.dir, { recursive: true, force: true });
}

async function addTenants(deps: AppDeps & { store: SqliteStore }, n: number, kind: 'sandbox' | 'production' = 'production'): Promise<string[]> {
  const now = deps.clock.now().toISOString();
  const insert = deps.store.db.prepare('INSERT INTO tenants (id, kind, display_name, retain_statutory_metadata, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?)');
  const ids = Array.from({ length: n }, () => deps.ids.next('ten'));
  await deps.store.transaction(async () => ids.forEach((id) => insert.run(id, kind, 'bench', now, now)));
  return ids;
}

/** Writes `perTenant[i]` records for tenant i at the clock's time: record row + tenant-log leaf. */
async function writeRecords(deps: AppDeps & { store: SqliteStore }, tenants: string[], perTenant: (i: number) => number): Promise<number> {
  const at = deps.clock.now().toISOString();
  let written = 0;
  const chunk = 50_000;
  let pending: ((tx: Tx, trees: StoredTrees) => Promise<void>)[] = [];
  const flush = async () => {
    const jobs = pending;
    pending = [];
    await deps.store.transaction(async (tx) => {
      // Over the transaction's store: it shares the outside store's caches.
      const trees = new StoredTrees(tx.anchoring);
      for (const j of jobs) await j(tx, trees);
    });
  };
  for (const [i, tenantId] of tenants.entries()) {
    const first = await deps.store.anchoring.tenantLogSize(tenantId);
    for (let k = 0; k < perTenant(i); k++) {
      const seq = first + k;
      pending.push(async (tx, trees) => {
        const hash = sha256Hex(`${tenantId}/${seq}`);
        await tx.evidence.insertRecord({
          tenantId, tenantSeq: seq, actionKey: `eu-ai-act:output_marked:${tenantId}-${seq}`, vertical: 'eu-ai-act', pack: 'eu-ai-act', kind: 'record',
          decision: null, status: 'recorded', reviewRoute: null, payloadHash: hash, packetHash: hash, attestation: '{}', attestationHash: hash,
          signature: 'x', keyId: 'bench', devKey: false, recordedAt: at, credits: 0, details: '{}',
        });
        await trees.append(tenantId, seq, fromHex(hash));
        await tx.anchoring.setTenantLogSize(tenantId, seq + 1, at);
      });
      written++;
      if (pending.length >= chunk) await flush();
    }
  }
  await flush();
  return written;
}

/** Median wall time of closing `rounds` epochs, each after one new record per tenant. */
async function closeRounds(deps: AppDeps & { store: SqliteStore }, closer: EpochCloser, clock: ManualClock, tenants: string[], rounds: number): Promise<number> {
  const ms: number[] = [];
  for (let r = 0; r < rounds; r++) {
    clock.advance(HOUR);
    await closer.closeDue(); // the period just ended, with nothing new in it: not measured
    await writeRecords(deps, tenants, () => 1);
    clock.advance(HOUR);
    // In service the checkpoint worker copies the WAL back off the request path; here it
    // runs between rounds, so no close pays for the inserts before it.
    await deps.store.withConnection((db) => db.pragma('wal_checkpoint(TRUNCATE)'));
    ms.push(await timed(() => closer.closeDue())); // exactly the period holding one new leaf per tenant
  }
  return median(ms);
}

/** A database of TENANTS tenants holding `perTenant(i)` records each, with epochs closed up to now. */
async function populated(perTenant: (i: number) => number) {
  const clock = new ManualClock('2025-01-01T00:10:00.000Z');
  const deps = await tempDeps(clock);
  const tenants = await addTenants(deps, TENANTS);
  const closer = new EpochCloser({
    store: deps.store,
    events: deps.webhooks.outbox,
    signer: deps.keyring.production,
    clock,
    ids: deps.ids,
    cadenceSeconds: 3600,
    log: createMemoryLogger(),
  });
  await writeRecords(deps, tenants, perTenant);
  clock.advance(HOUR);
  await closer.closeDue();
  return { deps, clock, tenants, closer };
}

export async function benchAnchoring(): Promise<void> {
  section(`Epoch close with ${TENANTS.toLocaleString('en-US')} tenants holding new leaves, at 1e4 and 1e6 stored records`);
  const small = await populated(() => 10);
  // Half a million records in one tenant (the deepest log), the rest spread evenly.
  let large!: Awaited<ReturnType<typeof populated>>;
  const bulkMs = await timed(async () => (large = await populated((i) => (i === 0 ? 500_000 : 480))));
  line('1e6 records written and their first epoch closed', `${(bulkMs / 1000).toFixed(1)} s`);
  // Rounds alternate between the two databases, so load on the shared machine hits both alike.
  const smallMs: number[] = [];
  const largeMs: number[] = [];
  for (let r = 0; r < 7; r++) {
    smallMs.push(await closeRounds(small.deps, small.closer, small.clock, small.tenants, 1));
    largeMs.push(await closeRounds(large.deps, large.closer, large.clock, large.tenants, 1));
  }
  const count = (d: AppDeps & { store: SqliteStore }) => (d.store.db.prepare('SELECT count(*) AS n FROM sealed_records').get() as { n: number }).n;
  const s = median(smallMs);
  const l = median(largeMs);
  compare(
    { name: `epoch close at ${count(small.deps).toLocaleString('en-US')} records (${s.toFixed(1)} ms)`, opsPerSec: 1000 / s },
    { name: `epoch close at ${count(large.deps).toLocaleString('en-US')} records (${l.toFixed(1)} ms)`, opsPerSec: 1000 / l },
  );
  line('close cost ratio 1e6 / 1e4', `${(l / s).toFixed(2)} (target <= 1.5)`);
  await dispose(small.deps);
  const { deps, tenants } = large;

  section('Inclusion proof at 1e6 records (deepest tenant log: 500,000 leaves)');
  const prover = new InclusionProver(deps.store.anchoring);
  const big = tenants[0]!;
  const size = await deps.store.anchoring.tenantLogSize(big);
  const kb = new Uint8Array(1024);
  const anchoredSize = (await deps.store.anchoring.tenantLog(big))!.anchoredSize;
  let seq = 0;
  const leafOf = (s: number) => ({ tenantId: big, tenantSeq: s, actionKey: `eu-ai-act:output_marked:${big}-${s}`, attestationHash: sha256Hex(`${big}/${s}`) });
  // The records asked about are read beforehand: what is measured is the prover alone.
  const leaves = Array.from({ length: 4096 }, (_, i) => leafOf((i * 7919) % anchoredSize));
  const sample = (await prover.prove(leafOf(123_457)))!;
  const p1 = proofFromHex(sample.tenant_log.proof);
  const p2 = proofFromHex(sample.epoch.proof);
  const tenantRoot = fromHex(sample.tenant_log.root);
  const canonicalRoot = fromHex(sample.epoch.canonical_root);
  const l1 = leafHash(fromHex(sample.attestation_hash));
  const l2 = fromHex(sample.epoch.leaf_hash);
  const shaRate = measure('one SHA-256 of 1 KB', () => sha256(kb));
  // Awaited as the route awaits it: the rate includes the store's promise per proof.
  const proveRate = await measureAsync('inclusion proof: generate both hops', () => prover.prove(leaves[(seq = (seq + 1) % leaves.length)]!));
  compare(
    shaRate,
    proveRate,
    measure('inclusion proof: verify both hops', () =>
      verifyInclusion(l1, sample.tenant_log.leaf_index, sample.tenant_log.tree_size, p1, tenantRoot) &&
      verifyInclusion(l2, sample.epoch.leaf_index, sample.epoch.tree_size, p2, canonicalRoot)),
  );
  line('tenant log size / hops', `${size.toLocaleString('en-US')} leaves; ${p1.length} + ${p2.length} proof hashes; root ${toHex(tenantRoot).slice(0, 16)}…`);
  await dispose(deps);

  section('Sealing throughput: tenant-log participant on against off (same pipeline otherwise)');
  const seals = 6000;
  const rate = async (anchoring: boolean) => {
    const c = new ManualClock('2025-01-01T00:00:00.000Z');
    const d = await tempDeps(c);
    const [tenantId] = await addTenants(d, 1);
    const sealer = new Sealer({
      store: d.store,
      participants: [
        meteringParticipant(),
        reviewsParticipant(),
        webhookParticipant(d.webhooks.outbox),
        ...(anchoring ? [tenantLogParticipant()] : []),
      ],
      keyring: d.keyring,
      clock: c,
      ids: d.ids,
    });
    const request = (): SealRequest => ({
      auth: { tenantId: tenantId!, tenantKind: 'production', keyId: generateApiKey('production').prefix },
      vertical: 'eu-ai-act', actionType: 'output_marked', pack: 'eu-ai-act', kind: 'record', decision: null, status: 'recorded', reviewRoute: null,
      payloadHash: 'a'.repeat(64), manifestDigest: null, policyDigest: null, details: {}, metering: { counted: true, credits: 1 },
      respond: (r) => ({ action_key: r.actionKey }),
    });
    await Promise.all(Array.from({ length: 500 }, () => sealer.seal(request()))); // warm-up
    const start = performance.now();
    await Promise.all(Array.from({ length: seals }, () => sealer.seal(request())));
    const opsPerSec = (seals * 1000) / (performance.now() - start);
    await dispose(d);
    return opsPerSec;
  };
  // Alternate, then take medians: the machine is shared and drifts.
  const off: number[] = [];
  const on: number[] = [];
  for (let r = 0; r < 3; r++) {
    off.push(await rate(false));
    on.push(await rate(true));
  }
  compare({ name: 'seal (metering, reviews, events)', opsPerSec: median(off) }, { name: 'seal + tenant-log leaf (anchoring on)', opsPerSec: median(on) });
  line('ratio on / off', `${(median(on) / median(off)).toFixed(2)} (target >= 0.9)`);

  section('Gate throughput over the app: anchoring on against off (everything else the same)');
  const gate = async (anchoring: boolean) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-anchoring-gate-'));
    const apiKey = await seedProductionTenant(dir);
    const deps = await openSqliteDeps(loadConfig({ SVC_DATA_DIR: dir }, []), { log: createMemoryLogger() });
    // The service's own participants, less the tenant log when anchoring is off.
    const participants = sealParticipants({ outbox: deps.webhooks.outbox, routing: deps.routing.participant }).filter((p) => anchoring || p.name !== 'anchoring');
    const sealer = new Sealer({ store: deps.store, participants, keyring: deps.keyring, clock: deps.clock, ids: deps.ids });
    return { run: gateRunner(createApp({ ...deps, sealer }), apiKey), close: async () => (await closeDeps(deps), fs.rmSync(dir, { recursive: true, force: true })) };
  };
  const gateOff = await gate(false);
  const gateOn = await gate(true);
  try {
    const rates = await alternateRounds(gateOff.run, gateOn.run);
    compare({ name: 'durable gate decisions, no tenant-log leaf', opsPerSec: rates.off }, { name: 'durable gate decisions, anchoring on', opsPerSec: rates.on });
    line('ratio on / off', `${(rates.on / rates.off).toFixed(2)} (target >= 0.9)`);
  } finally {
    await gateOff.close();
    await gateOn.close();
  }

  section('Batch package of 1,000 bundles');
  const c = new ManualClock('2025-01-01T00:00:00.000Z');
  const d = await tempDeps(c);
  const app = createApp(d);
  const [tenantId] = await addTenants(d, 1);
  const key = generateApiKey('production');
  await d.store.tenants.addApiKey({ id: d.ids.next('key'), tenantId: tenantId!, keyHash: key.hash, prefix: key.prefix, lastFour: key.lastFour, createdAt: c.now().toISOString() });
  const sealed = await Promise.all(
    Array.from({ length: 1000 }, () =>
      d.sealer.seal({
        auth: { tenantId: tenantId!, tenantKind: 'production', keyId: key.prefix },
        vertical: 'eu-ai-act', actionType: 'output_marked', pack: 'eu-ai-act', kind: 'record', decision: null, status: 'recorded', reviewRoute: null,
        payloadHash: 'a'.repeat(64), manifestDigest: null, policyDigest: null, details: {}, metering: { counted: true, credits: 1 },
        respond: (r) => r.actionKey,
      }),
    ),
  );
  const keys = sealed.map((o) => o.body as string);
  const publicKey = d.keyring.production.publicKey;
  const buildAll = async () => {
    for (const k of keys) {
      const v = viewRecord((await d.store.evidence.findRecord(tenantId!, k))!);
      buildBundle(v.fields, v.packet.seal, publicKey);
    }
  };
  const post = (accept: string) => async () => {
    const res = await app.request('/evidence-packets/seal-bundle/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept, 'x-service-key': key.key },
      body: JSON.stringify({ action_keys: keys }),
    });
    if (res.status !== 200) throw new Error(`batch answered ${res.status}`);
    await res.arrayBuffer();
  };
  const timesOf = async (fn: () => unknown, n = 5) => {
    const ms: number[] = [];
    for (let i = 0; i < n; i++) {
      const s = performance.now();
      await fn();
      ms.push(performance.now() - s);
    }
    return median(ms);
  };
  const base = await timesOf(buildAll);
  const json = await timesOf(post('application/json'));
  const tar = await timesOf(post('application/x-tar'));
  compare(
    { name: `build 1,000 bundles in memory (${base.toFixed(0)} ms)`, opsPerSec: 1000 / base },
    { name: `POST batch, JSON package (${json.toFixed(0)} ms)`, opsPerSec: 1000 / json },
    { name: `POST batch, tar package (${tar.toFixed(0)} ms)`, opsPerSec: 1000 / tar },
  );
  await dispose(d);
}
