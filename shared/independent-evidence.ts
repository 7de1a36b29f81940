/**
 * What a record's inclusion proof shows beyond the operator's own signatures (DESIGN.md §4):
 * the epoch's RFC 3161 time-stamp tokens and its witnesses' cosignatures
 * (c2sp.org/tlog-cosignature), checked here, in the browser,
 * so the console and the extension say "independently timestamped / witnessed" only for what
 * verifies. Nothing is claimed unless the inclusion proof itself verifies for this record
 * under the pinned service keys: tokens and cosignatures on a proof of another history prove
 * nothing about this one.
 *
 * Labels are honest about their trust: with no TSA roots to check against, a token is only
 * "present"; with no witness keys, cosignature lines are only what the signed note names.
 * Hostile input never throws.
 */
import { failedAnchorChecks, verifyInclusionProof } from './anchor-verify.ts';
import { parseNote, parseVerifierKey } from './note.ts';
import type { Note, VerifierKey } from './note.ts';
import { certificatesFromPem, verifyEpochTimestamps } from './timestamp.ts';
import type { TrustedKeySet } from './trusted-keys.ts';
import { verifyCosignature } from './witness.ts';

/** The roots and keys to check against (GET /epochs/verifiers, or the verifier's own). */
export interface IndependentVerifiers {
  /** Trusted TSA root certificates, DER. */
  tsaRoots: Uint8Array[];
  /** Trusted witness keys (cosignature/v1, type 0x04). */
  witnessKeys: VerifierKey[];
}

export type TimestampShown =
  /** A token over this checkpoint verifies under the roots: by whom (the signer's subject, else the TSA URL) and when. */
  | { state: 'verified'; by: string; genTime: string }
  /** Tokens are there but no roots were given to check them against. */
  | { state: 'present'; by: string; genTime: string }
  /** Tokens are there and none verifies. */
  | { state: 'refused'; detail: string }
  /** The epoch has asked for a token and none has arrived yet. */
  | { state: 'awaiting' };

export type WitnessShown =
  /** Cosignatures of these trusted witnesses verify over this very checkpoint. */
  | { state: 'verified'; names: string[] }
  /** Cosignature lines the note names, none from a trusted key (no keys, or other witnesses). */
  | { state: 'unchecked'; names: string[] }
  /** A line of a trusted key does not verify, or the cosigned checkpoint is another one. */
  | { state: 'refused'; detail: string };

export interface IndependentEvidence {
  /** The inclusion proof's own checks that failed (then nothing else is claimed). */
  proofFailed: string[];
  /** null: the epoch has no token and asked for none. */
  timestamp: TimestampShown | null;
  /** null: no cosignature on the epoch's checkpoint. */
  witnesses: WitnessShown | null;
}

const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** GET /epochs/verifiers parsed; unusable entries are skipped (and so trusted for nothing). */
export function parseVerifiers(body: unknown): IndependentVerifiers {
  const b = obj(body);
  const tsaRoots: Uint8Array[] = [];
  for (const pem of Array.isArray(b.tsa_roots) ? b.tsa_roots : []) {
    try {
      if (typeof pem === 'string') tsaRoots.push(...certificatesFromPem(pem));
    } catch {
      // Not a certificate: nothing to trust.
    }
  }
  const witnessKeys: VerifierKey[] = [];
  for (const w of Array.isArray(b.witnesses) ? b.witnesses : []) {
    try {
      const key = parseVerifierKey(String(obj(w).key));
      if (key.type === 0x04) witnessKeys.push(key);
    } catch {
      // Not a verifier key: nothing to trust.
    }
  }
  return { tsaRoots, witnessKeys };
}

export async function independentEvidence(proof: unknown, keys: TrustedKeySet, verifiers: IndependentVerifiers, attestationHash?: string): Promise<IndependentEvidence> {
  const anchored = await verifyInclusionProof(proof, keys, attestationHash);
  if (!anchored.verified) return { proofFailed: failedAnchorChecks(anchored), timestamp: null, witnesses: null };
  const header = obj(obj(proof).epoch_header);
  return { proofFailed: [], timestamp: await timestampShown(header, verifiers.tsaRoots), witnesses: await witnessShown(header, verifiers.witnessKeys) };
}

async function timestampShown(header: Record<string, unknown>, roots: Uint8Array[]): Promise<TimestampShown | null> {
  const tokens = Array.isArray(header.timestamps) ? header.timestamps : [];
  if (tokens.length === 0) return header.timestamp_status === 'awaiting' ? { state: 'awaiting' } : null;
  if (roots.length === 0) {
    const first = obj(tokens[0]);
    return { state: 'present', by: String(first.tsa ?? 'unknown'), genTime: String(first.gen_time ?? '') };
  }
  try {
    const results = await verifyEpochTimestamps(tokens, header.checkpoint, roots);
    const valid = results.find((r) => r.verified);
    if (valid) return { state: 'verified', by: valid.signer ?? valid.tsa, genTime: valid.genTime ?? '' };
    const why = results.flatMap((r) => r.checks.filter((c) => !c.ok).map((c) => c.name));
    return { state: 'refused', detail: `no token verifies (${[...new Set(why)].join(', ') || 'malformed'})` };
  } catch (e) {
    return { state: 'refused', detail: e instanceof Error ? e.message : String(e) };
  }
}

async function witnessShown(header: Record<string, unknown>, witnessKeys: VerifierKey[]): Promise<WitnessShown | null> {
  if (typeof header.cosigned_checkpoint !== 'string') return null;
  let note: Note;
  let origin: string;
  try {
    note = parseNote(header.cosigned_checkpoint);
    const signed = parseNote(String(header.checkpoint));
    if (note.text !== signed.text) return { state: 'refused', detail: 'the cosigned checkpoint is not the checkpoint the log signed' };
    origin = signed.text.slice(0, signed.text.indexOf('\n'));
  } catch (e) {
    return { state: 'refused', detail: `the cosigned checkpoint is malformed: ${e instanceof Error ? e.message : String(e)}` };
  }
  // The log's own line is not a witness's (c2sp.org/tlog-checkpoint: its key name is the origin).
  const lines = [...new Set(note.signatures.filter((s) => s.name !== origin).map((s) => s.name))];
  if (lines.length === 0) return null;
  const verified: string[] = [];
  for (const key of witnessKeys) {
    try {
      const c = await verifyCosignature(note, key);
      if (c && !verified.includes(c.name)) verified.push(c.name);
    } catch (e) {
      return { state: 'refused', detail: e instanceof Error ? e.message : String(e) };
    }
  }
  return verified.length > 0 ? { state: 'verified', names: verified } : { state: 'unchecked', names: lines };
}
