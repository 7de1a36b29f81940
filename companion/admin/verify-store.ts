/**
 * Checks a whole SQLite store from its own rows, the way an outside verifier checks the
 * evidence it was handed (DESIGN.md §3, §4), so a restored or long-running store is known to
 * hold exactly what was signed:
 *
 * - each tenant's chain: tenant_seq gapless from 0, each attestation's JCS text hashing to its
 *   attestation_hash, naming the previous entry's hash (prev_attestation_hash), agreeing with
 *   its row, and carrying an Ed25519 signature that verifies under the key it names;
 * - each tenant log: the RFC 9162 tree head recomputed from the leaves at every size an epoch
 *   anchored equals the stored tenant_chain_root, and the stored tree levels the service
 *   serves proofs from give the same head at the log's size;
 * - each epoch: gapless, its leaves' canonical_root and its epoch_digest recomputed, linked to
 *   the previous digest, the epoch log head recomputed, and the signed header and tlog
 *   checkpoint verified (shared/anchor-verify.ts).
 *
 * The result is one row per tenant and one for the epochs (plus a row per failing epoch).
 * Reads only; on a live store it reads inside one transaction, a consistent snapshot while
 * the service keeps writing (SQLite WAL readers never block the writer).
 */
import { canonicalize } from '../../shared/canonical-json.ts';
import { verifyEd25519 } from '../../shared/ed25519.ts';
import { fromBase64Url, fromHex, toHex, utf8 } from '../../shared/encoding.ts';
import { EPOCH_HEADER_FORMAT, epochDigest, epochLeafBytes } from '../../shared/epoch.ts';
import { sha256Hex } from '../../shared/hash.ts';
import { MerkleTree, leafHash, treeHead } from '../../shared/merkle.ts';
import { verifyEpochHeader } from '../../shared/anchor-verify.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import type { TrustedKeySet } from '../../shared/trusted-keys.ts';
import { promised } from '../core/async-store.ts';
import type { Db } from '../core/db.ts';
import { EPOCH_LOG_ID, signedHeader } from '../anchoring/epochs.ts';
import { createSqliteAnchoringStore } from '../anchoring/sqlite-store.ts';
import type { AnchoringStore, EpochLeafRow, EpochRow } from '../anchoring/store.ts';
import { StoredTrees } from '../anchoring/stored-tree.ts';
import { toLeaf } from '../anchoring/rows.ts';
import type { LeafDbRow } from '../anchoring/rows.ts';
import type { RecordDbRow } from '../evidence/rows.ts';
import { storeJwks, storedProductionKeys } from './store-keys.ts';

export interface CheckRow {
  /** `tenant <id>`, `epochs`, `epoch <seq>`, `keys`, `manifest`… */
  subject: string;
  checked: string;
  count: string;
  ok: boolean;
  /** The first failure, when not ok. */
  detail: string;
}

export interface StoreReport {
  ok: boolean;
  rows: CheckRow[];
  tenants: number;
  records: number;
  epochs: number;
}

export interface VerifyStoreOptions {
  /** Trust these keys (a published JWKS) instead of the store's own production_keys. */
  keys?: TrustedKeySet;
}

/** Records read per query: bounded memory per step, whatever a tenant's size. */
const PAGE = 2000;
/** Failures listed per row at most; the count says how many there were. */
const SHOWN_FAILURES = 1;

/** The evidence columns a chain check reads (the evidence capability's row type). */
type RecordRow = Pick<RecordDbRow, 'tenant_seq' | 'action_key' | 'payload_hash' | 'packet_hash' | 'attestation' | 'attestation_hash' | 'signature' | 'key_id' | 'dev_key' | 'recorded_at'>;

export async function verifyStore(db: Db, options: VerifyStoreOptions = {}): Promise<StoreReport> {
  const rows: CheckRow[] = [];
  db.exec('BEGIN');
  try {
    const keys = options.keys ?? keysRow(db, rows);
    const anchoring = promised<AnchoringStore>(createSqliteAnchoringStore(db));
    const trees = new StoredTrees(anchoring);
    const tenantIds = db
      .prepare<[], { tenant_id: string }>('SELECT tenant_id FROM tenant_logs UNION SELECT DISTINCT tenant_id FROM sealed_records ORDER BY tenant_id')
      .all()
      .map((r) => r.tenant_id);
    // One tenant's leaves and one epoch's at a time: memory stays bounded by the largest log.
    const anchoredLeaves = db.prepare<[string], LeafDbRow>('SELECT * FROM epoch_leaves WHERE tenant_id = ? ORDER BY tenant_size');
    let records = 0;
    for (const tenantId of tenantIds) {
      const row = await verifyTenant(db, tenantId, keys, anchoredLeaves.all(tenantId).map(toLeaf), anchoring, trees);
      records += row.records;
      rows.push(row.row);
    }
    const strays = db
      .prepare<[], { tenant_id: string; n: number }>(
        'SELECT tenant_id, count(*) AS n FROM epoch_leaves WHERE tenant_id NOT IN (SELECT tenant_id FROM tenant_logs UNION SELECT tenant_id FROM sealed_records) GROUP BY tenant_id ORDER BY tenant_id',
      )
      .all();
    for (const s of strays) rows.push(failRow(`tenant ${s.tenant_id}`, 'epoch leaves', `${s.n} checkpoints`, 'epochs anchor a tenant with no log and no records'));
    const epochs = await verifyEpochs(anchoring, keys, trees);
    rows.push(...epochs.rows);
    db.exec('COMMIT');
    return { ok: rows.every((r) => r.ok), rows, tenants: tenantIds.length, records, epochs: epochs.count };
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/** The store's own key set, and a row saying each production key row names its key truly. */
function keysRow(db: Db, rows: CheckRow[]): TrustedKeySet {
  const stored = storedProductionKeys(db);
  const jwks = storeJwks(db);
  const bad = stored.filter((k) => !jwks.keys.some((j) => j.kid === k.keyId));
  const active = stored.filter((k) => !k.retired).length;
  const checked = 'production key ids are RFC 7638 thumbprints; one active';
  const count = `${stored.length} production, 1 sandbox`;
  if (bad.length > 0) rows.push(failRow('keys', checked, count, `production key ${bad[0]!.keyId} is not the thumbprint of its public key`));
  else if (stored.length > 0 && active !== 1) rows.push(failRow('keys', checked, count, `expected one active production key, found ${active}`));
  else rows.push(okRow('keys', checked, count));
  return trustedKeySet(jwks);
}

/** One tenant's chain and log; at most one failure is shown, all are counted. */
async function verifyTenant(
  db: Db,
  tenantId: string,
  keys: TrustedKeySet,
  anchored: EpochLeafRow[],
  anchoring: AnchoringStore,
  trees: StoredTrees,
): Promise<{ row: CheckRow; records: number }> {
  const failures: string[] = [];
  const failed = (message: string) => void failures.push(message);
  const page = db.prepare<[string, number, number], RecordRow>(
    `SELECT tenant_seq, action_key, payload_hash, packet_hash, attestation, attestation_hash, signature, key_id, dev_key, recorded_at
       FROM sealed_records WHERE tenant_id = ? AND tenant_seq >= ? ORDER BY tenant_seq LIMIT ?`,
  );
  const tree = new MerkleTree();
  let prev: string | null = null;
  let expectedSeq = 0;
  for (;;) {
    const batch = page.all(tenantId, expectedSeq, PAGE);
    for (const r of batch) {
      if (r.tenant_seq !== expectedSeq) {
        failed(`tenant_seq ${expectedSeq} is missing (next is ${r.tenant_seq})`);
        expectedSeq = r.tenant_seq;
      }
      await checkRecord(tenantId, r, prev, keys, failed);
      tree.append(leafHash(fromHex(r.attestation_hash)));
      prev = r.attestation_hash;
      expectedSeq++;
    }
    if (batch.length < PAGE) break;
  }
  const records = tree.size;

  // RFC 9162 §2.1.1 heads at every size an epoch anchored, against the signed-over roots.
  const log = await anchoring.tenantLog(tenantId);
  const size = log?.size ?? 0;
  if (size > records) failed(`tenant_logs says ${size} leaves, the chain has ${records} records`);
  let lastAnchored = 0;
  for (const leaf of anchored.sort((a, b) => a.epochSeq - b.epochSeq)) {
    if (leaf.tenantSize <= lastAnchored) failed(`epoch ${leaf.epochSeq} anchors size ${leaf.tenantSize}, not above the earlier ${lastAnchored}`);
    if (leaf.tenantSize > records) {
      failed(`epoch ${leaf.epochSeq} anchors size ${leaf.tenantSize}, the chain has ${records} records`);
      continue;
    }
    const root = toHex(tree.rootAt(leaf.tenantSize));
    if (root !== leaf.tenantChainRoot) failed(`epoch ${leaf.epochSeq}: tree head at size ${leaf.tenantSize} is ${root}, the epoch leaf says ${leaf.tenantChainRoot}`);
    lastAnchored = Math.max(lastAnchored, leaf.tenantSize);
  }
  if ((log?.anchoredSize ?? 0) !== lastAnchored) failed(`tenant_logs says ${log?.anchoredSize ?? 0} leaves anchored, the epochs anchor ${lastAnchored}`);
  // The stored levels are what inclusion and consistency proofs are built from.
  if (size > 0 && size <= records) {
    const stored = toHex(await trees.rootAt(tenantId, size));
    const recomputed = toHex(tree.rootAt(size));
    if (stored !== recomputed) failed(`stored tree levels give head ${stored} at size ${size}, the records give ${recomputed}`);
  }

  const subject = `tenant ${tenantId}`;
  const checked = 'chain links, seq, hashes, signatures; log heads';
  const count = `${records} records, ${anchored.length} checkpoints`;
  return { row: failures.length === 0 ? okRow(subject, checked, count) : failRow(subject, checked, count, summarise(failures)), records };
}

async function checkRecord(tenantId: string, r: RecordRow, prev: string | null, keys: TrustedKeySet, failed: (m: string) => void): Promise<void> {
  const at = `tenant_seq ${r.tenant_seq}`;
  let att: Record<string, unknown>;
  try {
    att = JSON.parse(r.attestation) as Record<string, unknown>;
    // The stored text is what was signed: it must be its own RFC 8785 form, byte for byte.
    if (canonicalize(att) !== r.attestation) return failed(`${at}: the attestation text is not in RFC 8785 canonical form`);
  } catch {
    return failed(`${at}: the attestation is not JSON`);
  }
  const hash = sha256Hex(r.attestation);
  if (hash !== r.attestation_hash) return failed(`${at}: attestation hashes to ${hash}, the row says ${r.attestation_hash}`);
  const mismatched = (
    [
      ['tenant_id', tenantId],
      ['tenant_seq', r.tenant_seq],
      ['action_key', r.action_key],
      ['payload_hash', r.payload_hash],
      ['packet_hash', r.packet_hash],
      ['key_id', r.key_id],
      ['dev_key', r.dev_key === 1],
      ['recorded_at', r.recorded_at],
      ['prev_attestation_hash', prev],
    ] as const
  ).find(([field, value]) => att[field] !== value);
  if (mismatched) return failed(`${at}: the attestation's ${mismatched[0]} does not match the ${mismatched[0] === 'prev_attestation_hash' ? 'previous record' : 'row'}`);
  const key = keys.get(r.key_id);
  if (!key) return failed(`${at}: key ${r.key_id} is not in the trusted key set`);
  if (key.devKey !== (r.dev_key === 1)) return failed(`${at}: dev_key ${r.dev_key === 1} but key ${r.key_id} is ${key.devKey ? 'the sandbox key' : 'a production key'}`);
  let signature: Uint8Array;
  try {
    signature = fromBase64Url(r.signature);
  } catch {
    return failed(`${at}: the signature is not base64url`);
  }
  if (!(await verifyEd25519(key.publicKey, utf8(r.attestation), signature))) failed(`${at}: the Ed25519 signature does not verify under key ${r.key_id}`);
}

/** The epochs in order: one row for all of them, and one more for each that fails. */
async function verifyEpochs(anchoring: AnchoringStore, keys: TrustedKeySet, trees: StoredTrees): Promise<{ rows: CheckRow[]; count: number }> {
  const rows: CheckRow[] = [];
  const log = new MerkleTree();
  let prevDigest: string | null = null;
  let failedCount = 0;
  let i = 0;
  for await (const e of allEpochs(anchoring)) {
    const failures: string[] = [];
    const failed = (m: string) => void failures.push(m);
    if (e.epochSeq !== i) failed(`epoch_seq ${i} is missing (next is ${e.epochSeq})`);
    i = e.epochSeq + 1;
    const leaves = await anchoring.epochLeaves(e.epochSeq);
    if (leaves.some((l, j) => l.leafIndex !== j)) failed('leaf indexes are not gapless from 0');
    if (leaves.some((l, j) => j > 0 && leaves[j - 1]!.tenantId >= l.tenantId)) failed('leaves are not sorted by tenant_id');
    if (leaves.length !== e.tenantCount) failed(`tenant_count ${e.tenantCount}, ${leaves.length} leaves`);
    const canonicalRoot = toHex(treeHead(leaves.map((l) => leafHash(epochLeafBytes({ tenant_id: l.tenantId, tenant_size: l.tenantSize, tenant_chain_root: l.tenantChainRoot })))));
    if (canonicalRoot !== e.canonicalRoot) failed(`canonical_root recomputes to ${canonicalRoot}, stored ${e.canonicalRoot}`);
    if (e.prevEpochDigest !== prevDigest) failed(`prev_epoch_digest ${e.prevEpochDigest ?? 'null'}, the previous epoch's digest is ${prevDigest ?? 'null'}`);
    const digest = epochDigest({ epoch_seq: e.epochSeq, canonical_root: canonicalRoot, prev_epoch_digest: prevDigest, anchored_at: e.anchoredAt, cadence_seconds: e.cadenceSeconds });
    if (digest !== e.epochDigest) failed(`epoch_digest recomputes to ${digest}, stored ${e.epochDigest}`);
    log.append(leafHash(fromHex(e.epochDigest)));
    failures.push(...headerMismatches(e, canonicalRoot, digest, prevDigest, toHex(log.root()), log.size));
    const signed = await verifyEpochHeader(signedHeader(e), keys);
    for (const c of signed.checks) if (!c.ok) failed(`${c.name}: ${c.detail}`);
    if (failures.length > 0) {
      failedCount++;
      rows.push(failRow(`epoch ${e.epochSeq}`, 'roots, digest, header, signature, checkpoint', `${leaves.length} leaves`, summarise(failures)));
    }
    prevDigest = e.epochDigest;
  }
  const n = log.size;
  if (n > 0) {
    const stored = toHex(await trees.rootAt(EPOCH_LOG_ID, n));
    if (stored !== toHex(log.root())) {
      failedCount++;
      rows.push(failRow('epoch log', 'stored levels', `${n} epochs`, `stored tree levels give head ${stored}, the digests give ${toHex(log.root())}`));
    }
  }
  const checked = 'canonical roots, digests, links, signed headers, checkpoints';
  const count = `${n} epochs${n > 0 ? ` (0..${n - 1})` : ''}`;
  rows.unshift(failedCount === 0 ? okRow('epochs', checked, count) : failRow('epochs', checked, count, `${failedCount} failing: see the epoch rows`));
  return { rows, count: n };
}

/** Every closed epoch, oldest first, a page at a time. */
async function* allEpochs(anchoring: AnchoringStore): AsyncGenerator<EpochRow> {
  for (let after = -1; ; ) {
    const page = await anchoring.epochs(after, 500);
    yield* page;
    if (page.length < 500) return;
    after = page[page.length - 1]!.epochSeq;
  }
}

/** The signed header must say what the row and the recomputation say (DESIGN.md §4). */
function headerMismatches(e: EpochRow, canonicalRoot: string, digest: string, prevDigest: string | null, logRoot: string, logSize: number): string[] {
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(e.header) as Record<string, unknown>;
    if (canonicalize(header) !== e.header) return ['the header text is not in RFC 8785 canonical form'];
  } catch {
    return ['the header is not JSON'];
  }
  const expected: [string, unknown][] = [
    ['format', EPOCH_HEADER_FORMAT],
    ['epoch_seq', e.epochSeq],
    ['canonical_root', canonicalRoot],
    ['prev_epoch_digest', prevDigest],
    ['anchored_at', e.anchoredAt],
    ['cadence_seconds', e.cadenceSeconds],
    ['epoch_digest', digest],
    ['period_start', e.periodStart],
    ['period_end', e.periodEnd],
    ['tenant_count', e.tenantCount],
    ['key_id', e.keyId],
  ];
  const wrong = expected.filter(([field, value]) => header[field] !== value).map(([field]) => field);
  const epochLog = (header.epoch_log ?? {}) as Record<string, unknown>;
  if (epochLog.size !== logSize || epochLog.root !== logRoot) wrong.push('epoch_log');
  return wrong.length > 0 ? [`the signed header's ${wrong.join(', ')} disagree with the stored and recomputed values`] : [];
}

function summarise(failures: string[]): string {
  const shown = failures.slice(0, SHOWN_FAILURES).join('; ');
  return failures.length > SHOWN_FAILURES ? `${shown} (and ${failures.length - SHOWN_FAILURES} more)` : shown;
}

const okRow = (subject: string, checked: string, count: string): CheckRow => ({ subject, checked, count, ok: true, detail: '' });
const failRow = (subject: string, checked: string, count: string, detail: string): CheckRow => ({ subject, checked, count, ok: false, detail });

/** The report as one plain-text table, for a terminal or a log. */
export function reportTable(rows: readonly CheckRow[]): string {
  const cells = [['SUBJECT', 'CHECKED', 'COUNT', 'RESULT'], ...rows.map((r) => [r.subject, r.checked, r.count, r.ok ? 'ok' : `FAIL: ${r.detail}`])];
  const widths = [0, 1, 2].map((i) => Math.max(...cells.map((c) => c[i]!.length)));
  return cells.map((c) => `${c[0]!.padEnd(widths[0]!)}  ${c[1]!.padEnd(widths[1]!)}  ${c[2]!.padEnd(widths[2]!)}  ${c[3]}`).join('\n');
}
