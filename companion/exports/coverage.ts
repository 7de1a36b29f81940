/**
 * Evidence coverage per pack (GET /tenant/exports/records/summary), and the figures the OSCAL,
 * data-catalog and AI-acquisition read models are built from: how many records each pack
 * sealed, what they decided (by seal kind), which duty events were recorded, where reviews
 * stand, and how many records are anchored in a closed epoch.
 */
import { gatePacks, getPack, recordPacks } from '../packs/registry.ts';
import type { AnchoredCounts } from './anchoring-coverage.ts';
import type { ExportStore } from './store.ts';

export const REVIEW_STATUSES = ['pending', 'escalated', 'approved', 'rejected', 'expired'] as const;

export interface PackCoverage {
  pack: string;
  /** gate or record, from the pack registry. */
  pack_kind: 'gate' | 'record';
  records: number;
  first_recorded_at: string | null;
  last_recorded_at: string | null;
  /** Seal kind (gate, review, policy, record, …) → decision or status → count. */
  decisions_by_kind: Record<string, Record<string, number>>;
  /** Record packs: manifest event type id → count of recorded events. */
  records_by_event_type: Record<string, number>;
  /** Paused actions by review status; overdue are open items whose window has ended (they fail closed). */
  reviews: Record<(typeof REVIEW_STATUSES)[number] | 'overdue', number>;
  anchoring: { anchored: number; not_yet_anchored: number };
}

export interface Coverage {
  records: number;
  first_recorded_at: string | null;
  last_recorded_at: string | null;
  packs: PackCoverage[];
}

export async function evidenceCoverage(store: ExportStore, anchored: AnchoredCounts, tenantId: string, now: string): Promise<Coverage> {
  const packs = new Map<string, PackCoverage>();
  for (const p of [...gatePacks(), ...recordPacks()]) packs.set(p.manifest.name, emptyPack(p.manifest.name, p.manifest.kind));
  const of = (name: string) => {
    let p = packs.get(name);
    if (!p) packs.set(name, (p = emptyPack(name, 'gate')));
    return p;
  };

  for (const row of await store.coverage(tenantId)) {
    const p = of(row.pack);
    p.records += row.count;
    p.first_recorded_at = min(p.first_recorded_at, row.firstRecordedAt);
    p.last_recorded_at = max(p.last_recorded_at, row.lastRecordedAt);
    const outcome = row.decision ?? row.status;
    const byKind = (p.decisions_by_kind[row.kind] ??= {});
    byKind[outcome] = (byKind[outcome] ?? 0) + row.count;
    if (row.kind === 'record') {
      const manifest = getPack(row.pack)?.manifest;
      const event = manifest?.kind === 'record' ? manifest.event_types.find((e) => e.action_type === row.actionType) : undefined;
      const id = event?.id ?? row.actionType;
      p.records_by_event_type[id] = (p.records_by_event_type[id] ?? 0) + row.count;
    }
  }
  for (const row of await store.reviewCoverage(tenantId, now)) {
    const p = of(row.pack);
    if ((REVIEW_STATUSES as readonly string[]).includes(row.status)) p.reviews[row.status as (typeof REVIEW_STATUSES)[number]] += row.count;
    p.reviews.overdue += row.overdue;
  }
  const anchoredByPack = await anchored.anchoredByPack(tenantId);
  for (const p of packs.values()) {
    const a = Math.min(anchoredByPack.get(p.pack) ?? 0, p.records);
    p.anchoring = { anchored: a, not_yet_anchored: p.records - a };
  }

  const list = [...packs.values()];
  return {
    records: list.reduce((n, p) => n + p.records, 0),
    first_recorded_at: list.reduce<string | null>((m, p) => min(m, p.first_recorded_at), null),
    last_recorded_at: list.reduce<string | null>((m, p) => max(m, p.last_recorded_at), null),
    packs: list,
  };
}

function emptyPack(pack: string, kind: 'gate' | 'record'): PackCoverage {
  return {
    pack,
    pack_kind: kind,
    records: 0,
    first_recorded_at: null,
    last_recorded_at: null,
    decisions_by_kind: {},
    records_by_event_type: {},
    reviews: { pending: 0, escalated: 0, approved: 0, rejected: 0, expired: 0, overdue: 0 },
    anchoring: { anchored: 0, not_yet_anchored: 0 },
  };
}

// RFC 3339 UTC with milliseconds compares as text.
const min = (a: string | null, b: string | null) => (a === null ? b : b === null || a <= b ? a : b);
const max = (a: string | null, b: string | null) => (a === null ? b : b === null || a >= b ? a : b);
