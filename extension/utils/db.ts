/**
 * The extension's local log, in the background's IndexedDB: decisions,
 * review outcomes, incidents (gate unreachable, fail-open), pinned signing keys and key alarms.
 * Never prompt text: only keys, decisions, hashes' verdicts and times.
 *
 * The schema and every migration live here (STYLE.md, "Extensions": one file for Dexie
 * versions). To change it, add `this.version(n + 1).stores({...}).upgrade(...)` below; never
 * edit a published version.
 */
import Dexie from 'dexie';
import type { EntityTable } from 'dexie';
import type { AdapterId } from './adapters/definitions.ts';

export type GateDecision = 'allow' | 'needs_review' | 'blocked';
export type ReviewStatus = 'pending' | 'escalated' | 'approved' | 'rejected' | 'expired' | 'withdrawn';

/** One sealed gate decision as this browser received and verified it. */
export interface DecisionEntry {
  action_key: string;
  decision: GateDecision;
  site: AdapterId;
  host: string;
  /** When this browser received the decision (its clock). */
  time: string;
  /** The seal's server-clock recorded_at. */
  recorded_at: string;
  verified: boolean;
  key_status: string;
  dev_key: boolean;
  failed_checks: string[];
  review_route: string | null;
  /** Counts of redacted identifiers by kind; never the identifiers. */
  redactions: Record<string, number>;
  review_status: ReviewStatus | null;
  reviewer: string | null;
  review_receipt_key: string | null;
  review_verified: boolean | null;
  review_time: string | null;
  /**
   * The attempt that was told to let the held action through. Set once and never moved to
   * another attempt, so an action is released at most once even across worker restarts.
   */
  released_attempt: string | null;
  /**
   * What the release came to, as the page reported it: `sent` with its evidence, or `not-sent`
   * (the approval stays usable for one retry of the same attempt). Absent before any release;
   * not indexed, so entries written before this field existed need no upgrade.
   */
  release_outcome?: { sent: boolean; evidence: string | null; time: string };
  /**
   * The client_nonce this browser sent with the gate request (hashed into its payload_hash and
   * kept nowhere else), so the employee can re-prove the payload. Not indexed; absent on
   * entries written before it was sent.
   */
  client_nonce?: string;
}

/** The gate could not be asked or gave an unusable answer. */
export interface IncidentEntry {
  id?: number;
  time: string;
  site: AdapterId;
  host: string;
  kind: 'not-configured' | 'unreachable' | 'http-error' | 'invalid-answer' | 'unverified';
  detail: string;
  fail_mode: 'closed' | 'open';
  /** True when fail-open let the action through without a decision. */
  released: boolean;
}

/** A review this browser posted as a reviewer, with its sealed receipt's verdict. */
export interface ReviewReceiptEntry {
  action_key: string;
  reviewed_action_key: string;
  decision: 'approved' | 'rejected' | 'escalated';
  reviewer: string;
  time: string;
  verified: boolean;
  key_status: string;
}

/** A signing key pinned by its id on first sight. */
export interface PinnedKey {
  kid: string;
  kty: string;
  crv: string;
  x: string;
  status: string;
  dev_key: boolean;
  first_seen: string;
  last_seen: string;
}

export interface KeyAlarm {
  id?: number;
  time: string;
  kid: string;
  kind: 'key-changed' | 'kid-mismatch' | 'key-unrevoked' | 'dev-key-changed';
  detail: string;
}

export class ExtensionDatabase extends Dexie {
  decisions!: EntityTable<DecisionEntry, 'action_key'>;
  incidents!: EntityTable<IncidentEntry, 'id'>;
  reviewReceipts!: EntityTable<ReviewReceiptEntry, 'action_key'>;
  pinnedKeys!: EntityTable<PinnedKey, 'kid'>;
  keyAlarms!: EntityTable<KeyAlarm, 'id'>;

  constructor(name = 'action-gate') {
    super(name);
    this.version(1).stores({
      decisions: 'action_key, time, site, decision',
      incidents: '++id, time',
      reviewReceipts: 'action_key, time, reviewed_action_key',
      pinnedKeys: 'kid',
      keyAlarms: '++id, time, kid',
    });
  }
}

export function openExtensionDatabase(name?: string): ExtensionDatabase {
  return new ExtensionDatabase(name);
}
