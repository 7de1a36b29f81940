/**
 * Roll-up epochs (DESIGN.md §4), the parts an outside verifier recomputes: the epoch leaf,
 * epoch_digest, the signed epoch header, and the C2SP tlog-checkpoint signed note that
 * publishes the log of epoch digests. Browser-safe.
 *
 * Two logs meet here. Each tenant log is an RFC 9162 tree whose leaf data is the raw 32-byte
 * attestation hash. Each epoch has a canonical tree whose leaves are the JCS bytes of
 * {tenant_id, tenant_size, tenant_chain_root} for the tenants with new leaves, in tenant_id
 * order. The epoch log, finally, is an RFC 9162 tree whose leaf n is epoch n's 32-byte
 * epoch_digest: its consistency proofs show any two epochs belong to one append-only history,
 * and its checkpoint is what a transparency-log witness cosigns.
 */
import { canonicalBytes } from './canonical-json.ts';
import { fromBase64Url, toBase64, utf8 } from './encoding.ts';
import { sha256, sha256Hex } from './hash.ts';

export const EPOCH_HEADER_FORMAT = 'svc.epoch/v1';

/** The leaf an epoch's canonical tree holds for one tenant. */
export interface EpochLeaf {
  tenant_id: string;
  tenant_size: number;
  tenant_chain_root: string;
}

/** The fields epoch_digest commits to, exactly (DESIGN.md §4). */
export interface EpochDigestInput {
  epoch_seq: number;
  canonical_root: string;
  prev_epoch_digest: string | null;
  anchored_at: string;
  cadence_seconds: number;
}

/** The signed epoch header: epoch_digest's inputs and more; signed as its JCS bytes. */
export interface EpochHeader extends EpochDigestInput {
  format: typeof EPOCH_HEADER_FORMAT;
  epoch_digest: string;
  /** The cadence period the epoch closed: records with period_start <= recorded_at < period_end. */
  period_start: string;
  period_end: string;
  /** Leaves of the canonical tree (tenants with new leaves). */
  tenant_count: number;
  /** Head of the epoch log after this epoch's digest was appended (size = epoch_seq + 1). */
  epoch_log: { size: number; root: string };
  key_id: string;
}

/** A header as served: its exact signed text, hash and signature (like a seal, DESIGN.md §3). */
export interface SignedEpochHeader {
  header: EpochHeader;
  header_hash: string;
  signature: string;
  key_id: string;
  alg: 'Ed25519';
  /** The C2SP tlog-checkpoint signed note for the epoch log at this epoch. */
  checkpoint: string;
}

export function epochLeafBytes(leaf: EpochLeaf): Uint8Array {
  return canonicalBytes({ tenant_id: leaf.tenant_id, tenant_size: leaf.tenant_size, tenant_chain_root: leaf.tenant_chain_root });
}

/** epoch_digest = SHA-256 of the JCS bytes of exactly these five fields (DESIGN.md §4). */
export function epochDigest(h: EpochDigestInput): string {
  return sha256Hex(
    canonicalBytes({
      epoch_seq: h.epoch_seq,
      canonical_root: h.canonical_root,
      prev_epoch_digest: h.prev_epoch_digest,
      anchored_at: h.anchored_at,
      cadence_seconds: h.cadence_seconds,
    }),
  );
}

// ---- C2SP signed-note / tlog-checkpoint (https://c2sp.org/signed-note, /tlog-checkpoint) ----

/** c2sp.org/signed-note: the Ed25519 signature type byte in the key hash and verifier key. */
export const SIGNED_NOTE_ED25519 = 0x01;
/** The signature line starts with U+2014 EM DASH and a space. */
const SIGNATURE_LINE_PREFIX = '\u2014 ';

/** The checkpoint body: origin, decimal tree size, base64 root hash, each ending in a newline. */
export function checkpointBody(origin: string, size: number, root: Uint8Array): string {
  if (origin === '' || /[\n+]/.test(origin) || /\s/.test(origin)) throw new RangeError(`expected an origin without spaces, newlines or '+', got ${JSON.stringify(origin)}`);
  return `${origin}\n${size}\n${toBase64(root)}\n`;
}

/** c2sp.org/signed-note key hash: the first 4 bytes of SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key). */
export function noteKeyHash(name: string, publicKey: Uint8Array): Uint8Array {
  const nameBytes = utf8(name);
  const input = new Uint8Array(nameBytes.length + 2 + publicKey.length);
  input.set(nameBytes);
  input[nameBytes.length] = 0x0a;
  input[nameBytes.length + 1] = SIGNED_NOTE_ED25519;
  input.set(publicKey, nameBytes.length + 2);
  return sha256(input).slice(0, 4);
}

/** The note: body, a blank line, then `— <name> base64(key hash ‖ signature)`. */
export function signedNote(body: string, name: string, publicKey: Uint8Array, signature: Uint8Array): string {
  const blob = new Uint8Array(4 + signature.length);
  blob.set(noteKeyHash(name, publicKey));
  blob.set(signature, 4);
  return `${body}\n${SIGNATURE_LINE_PREFIX}${name} ${toBase64(blob)}\n`;
}

export interface ParsedCheckpoint {
  origin: string;
  size: number;
  root: Uint8Array;
  /** The signed text: the body up to, not including, the blank line. */
  body: string;
  signatures: { name: string; keyHash: Uint8Array; signature: Uint8Array }[];
}

/** Parses a tlog-checkpoint note; throws RangeError naming what is malformed. */
export function parseCheckpoint(note: string): ParsedCheckpoint {
  const split = note.indexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new RangeError('expected a note body, a blank line and signature lines');
  const body = note.slice(0, split + 1);
  const lines = body.split('\n').slice(0, -1);
  if (lines.length < 3) throw new RangeError(`expected at least 3 body lines, got ${lines.length}`);
  const [origin, sizeText, rootText] = lines as [string, string, string];
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText)) throw new RangeError(`expected a decimal tree size, got ${JSON.stringify(sizeText)}`);
  const root = fromStdBase64(rootText);
  if (root.length !== 32) throw new RangeError(`expected a 32-byte root hash, got ${root.length} bytes`);
  const signatures = note
    .slice(split + 2, -1)
    .split('\n')
    .map((line) => {
      if (!line.startsWith(SIGNATURE_LINE_PREFIX)) throw new RangeError(`expected a signature line, got ${JSON.stringify(line)}`);
      const [name, blobText, extra] = line.slice(SIGNATURE_LINE_PREFIX.length).split(' ');
      if (!name || !blobText || extra !== undefined) throw new RangeError(`expected "— <name> <signature>", got ${JSON.stringify(line)}`);
      const blob = fromStdBase64(blobText);
      if (blob.length < 5) throw new RangeError('expected a key hash and a signature');
      return { name, keyHash: blob.slice(0, 4), signature: blob.slice(4) };
    });
  return { origin, size: Number(sizeText), root, body, signatures };
}

function fromStdBase64(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) throw new RangeError('expected standard base64');
  return fromBase64Url(text.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'));
}
