/**
 * Witnessed checkpoints: C2SP tlog-cosignature (cosignature/v1, Ed25519, signature type 0x04)
 * and the wire format of the C2SP tlog-witness add-checkpoint call, plus the verifier policy
 * "at least N cosignatures from these witness keys" that svc-verify applies. A cosignature is a
 * witness's statement that, as of its timestamp, this is the largest tree head it has seen for
 * the log and that it checked it consistent with every earlier one: a log that shows two
 * histories cannot collect cosignatures on both from one honest witness. Browser-safe.
 */
import { signEd25519, verifyEd25519 } from './ed25519.ts';
import { toBase64, toHex, utf8 } from './encoding.ts';
import { parseCheckpoint } from './epoch.ts';
import { NOTE_TYPE_COSIGNATURE_V1, NOTE_TYPE_ED25519, formatNote, fromStdBase64, noteKeyId, parseNote, parseSignatureLine, parseVerifierKey, signatureLine, signaturesOf } from './note.ts';
import type { Note, NoteSignature, VerifierKey } from './note.ts';

/** tlog-witness: a client MUST NOT send more than 63 consistency proof lines. */
export const MAX_PROOF_LINES = 63;
/** The answer's Content-Type with a 409 (the witness's latest size). */
export const TLOG_SIZE_CONTENT_TYPE = 'text/x.tlog.size';

/** tlog-cosignature "Ed25519 signed message": header line, time line, then the checkpoint text. */
export function cosignatureMessage(checkpointText: string, timestamp: number): Uint8Array {
  checkTimestamp(timestamp);
  return utf8(`cosignature/v1\ntime ${timestamp}\n${checkpointText}`);
}

function checkTimestamp(t: number): void {
  if (!Number.isSafeInteger(t) || t < 0) throw new RangeError('expected a non-negative integer POSIX timestamp');
}

/** Signs a cosignature/v1 line over `checkpointText` (the note text, up to the blank line). */
export function cosign(name: string, seed: Uint8Array, publicKey: Uint8Array, checkpointText: string, timestamp: number): string {
  const sig = signEd25519(seed, cosignatureMessage(checkpointText, timestamp));
  const blob = new Uint8Array(8 + sig.length);
  new DataView(blob.buffer).setBigUint64(0, BigInt(timestamp));
  blob.set(sig, 8);
  return signatureLine(name, noteKeyId(name, NOTE_TYPE_COSIGNATURE_V1, publicKey), blob);
}

export interface Cosignature {
  name: string;
  keyIdHex: string;
  /** POSIX seconds, as the witness stated it. */
  timestamp: number;
  line: string;
}

/**
 * The cosignature of `key` on the note, when one verifies: tlog-cosignature's
 * timestamped_signature is a big-endian u64 timestamp (at most 2^63 - 1) then 64 bytes of
 * Ed25519 over cosignatureMessage. A line of the key that does not verify is an error (signed
 * note: "If a signature from a known key fails to verify, clients SHOULD reject the whole note").
 */
export async function verifyCosignature(note: Note, key: VerifierKey): Promise<Cosignature | undefined> {
  if (key.type !== NOTE_TYPE_COSIGNATURE_V1) throw new RangeError(`witness key ${key.name} is not a cosignature/v1 (0x04) key`);
  for (const s of signaturesOf(note, key)) {
    const t = cosignatureTimestamp(s);
    const ok = await verifyEd25519(key.publicKey, cosignatureMessage(note.text, t), s.signature.slice(8));
    if (!ok) throw new CosignatureInvalid(`the cosignature of ${key.name} (${key.keyIdHex}) does not verify`);
    return { name: key.name, keyIdHex: key.keyIdHex, timestamp: t, line: s.line };
  }
  return undefined;
}

function cosignatureTimestamp(s: NoteSignature): number {
  if (s.signature.length !== 72) throw new CosignatureInvalid(`the cosignature of ${s.name} is ${s.signature.length} bytes, expected 8 + 64`);
  const t = new DataView(s.signature.buffer, s.signature.byteOffset, 8).getBigUint64(0);
  if (t > 2n ** 63n - 1n || t > BigInt(Number.MAX_SAFE_INTEGER)) throw new CosignatureInvalid(`the cosignature of ${s.name} has a timestamp out of range`);
  return Number(t);
}

export class CosignatureInvalid extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CosignatureInvalid';
  }
}

// ---- tlog-witness add-checkpoint (https://c2sp.org/tlog-witness) ----

/** The request body: `old <size>`, the proof lines (base64), a blank line, the checkpoint note. */
export function addCheckpointBody(oldSize: number, proof: readonly Uint8Array[], checkpoint: string): string {
  if (!Number.isSafeInteger(oldSize) || oldSize < 0) throw new RangeError('expected a non-negative old size');
  if (proof.length > MAX_PROOF_LINES) throw new RangeError(`expected at most ${MAX_PROOF_LINES} proof lines`);
  return `old ${oldSize}\n${proof.map((h) => `${toBase64(h)}\n`).join('')}\n${checkpoint}`;
}

export interface AddCheckpointRequest {
  oldSize: number;
  proof: Uint8Array[];
  checkpoint: string;
}

/** Parses an add-checkpoint body; RangeError (a 400 answer) for anything malformed. */
export function parseAddCheckpointBody(body: string): AddCheckpointRequest {
  const blank = body.indexOf('\n\n');
  if (blank < 0) throw new RangeError('expected the old size and proof lines, a blank line, then the checkpoint');
  const head = body.slice(0, blank).split('\n');
  const m = /^old (0|[1-9][0-9]{0,15})$/.exec(head[0] ?? '');
  if (!m) throw new RangeError('expected "old <size>" as the first line');
  const proofLines = head.slice(1);
  if (proofLines.length > MAX_PROOF_LINES) throw new RangeError(`expected at most ${MAX_PROOF_LINES} proof lines`);
  const proof = proofLines.map((l) => {
    const h = fromStdBase64(l);
    if (h.length !== 32) throw new RangeError('expected each proof line to be a 32-byte hash in base64');
    return h;
  });
  return { oldSize: Number(m[1]), proof, checkpoint: body.slice(blank + 2) };
}

/** The signature lines of a 200 answer; each must start with "— " and end with a newline. */
export function parseCosignatureLines(body: string): NoteSignature[] {
  if (!body.endsWith('\n')) throw new RangeError('expected signature lines ending in a newline');
  const lines = body.slice(0, -1).split('\n');
  if (lines.length === 0 || lines.length > 16) throw new RangeError('expected 1 to 16 signature lines');
  return lines.map(parseSignatureLine);
}

/** The 409 answer's body: the witness's latest cosigned size, in decimal, and a newline. */
export function parseTlogSize(body: string): number {
  const m = /^(0|[1-9][0-9]{0,15})\n$/.exec(body);
  if (!m) throw new RangeError('expected a decimal tree size and a newline');
  return Number(m[1]);
}

// ---- configured witnesses ----

export interface WitnessEndpoint {
  /** The witness's key name (the cosignature line's name). */
  name: string;
  /** The submission prefix: add-checkpoint is POSTed to <url>/add-checkpoint. */
  url: string;
  key: VerifierKey;
}

/**
 * The witnesses a companion asks (SVC_WITNESSES or the file SVC_WITNESSES_FILE): a JSON array
 * of {name, url, key} with key the verifier key in note format, type 0x04. Every problem is
 * reported, one line each, never echoing the value.
 */
export function parseWitnessList(text: string, source: string): { witnesses: WitnessEndpoint[]; problems: string[] } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { witnesses: [], problems: [`${source} is not JSON: expected an array of {"name", "url", "key"}`] };
  }
  if (!Array.isArray(value)) return { witnesses: [], problems: [`${source}: expected a JSON array of {"name", "url", "key"}`] };
  if (value.length > 32) return { witnesses: [], problems: [`${source}: expected at most 32 witnesses`] };
  const witnesses: WitnessEndpoint[] = [];
  const problems: string[] = [];
  value.forEach((w: unknown, i) => {
    const at = `${source}[${i}]`;
    if (w === null || typeof w !== 'object' || Array.isArray(w)) return void problems.push(`${at}: expected an object {"name", "url", "key"}`);
    const { name, url, key } = w as Record<string, unknown>;
    let parsed: VerifierKey | undefined;
    try {
      parsed = parseVerifierKey(String(key));
      if (parsed.type !== NOTE_TYPE_COSIGNATURE_V1) throw new RangeError('expected a cosignature/v1 key (type 0x04)');
    } catch (e) {
      problems.push(`${at}.key: ${(e as Error).message}`);
    }
    if (typeof name !== 'string' || (parsed && parsed.name !== name)) problems.push(`${at}.name: expected the key's name`);
    let u: URL | undefined;
    try {
      u = new URL(String(url));
    } catch {
      problems.push(`${at}.url: expected an absolute http(s) URL`);
    }
    if (u && ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.username !== '' || u.password !== '' || u.search !== '' || u.hash !== '')) {
      problems.push(`${at}.url: expected an http(s) URL without credentials, query or fragment`);
    }
    if (parsed && u && typeof name === 'string' && parsed.name === name) witnesses.push({ name, url: String(url).replace(/\/+$/, ''), key: parsed });
  });
  const names = new Set<string>();
  for (const w of witnesses) {
    if (names.has(w.name)) problems.push(`${source}: witness ${w.name} is listed twice`);
    names.add(w.name);
  }
  return problems.length > 0 ? { witnesses: [], problems } : { witnesses, problems };
}

// ---- verifier policy ----

export interface WitnessPolicy {
  /** Cosignatures from distinct trusted witness keys required. */
  minCosignatures: number;
  witnessKeys: VerifierKey[];
}

export interface WitnessCheck {
  name: 'witness_cosignatures';
  ok: boolean;
  detail: string;
  cosignatures: Cosignature[];
}

/**
 * Checks a cosigned checkpoint against the policy: the log's own signature is checked
 * elsewhere (anchor-verify.ts); here, cosignatures over the same note text from at least
 * `minCosignatures` of the trusted witness keys. Unknown keys' lines are ignored (signed-note).
 */
export async function checkCosignatures(cosignedCheckpoint: unknown, policy: WitnessPolicy): Promise<WitnessCheck> {
  const fail = (detail: string, cosignatures: Cosignature[] = []): WitnessCheck => ({ name: 'witness_cosignatures', ok: false, detail, cosignatures });
  if (typeof cosignedCheckpoint !== 'string') return fail('missing cosigned_checkpoint: no witness cosignatures to check');
  let note: Note;
  try {
    note = parseNote(cosignedCheckpoint);
    parseCheckpoint(cosignedCheckpoint);
  } catch (e) {
    return fail(`cosigned checkpoint is malformed: ${(e as Error).message}`);
  }
  const found: Cosignature[] = [];
  for (const key of policy.witnessKeys) {
    try {
      const c = await verifyCosignature(note, key);
      if (c) found.push(c);
    } catch (e) {
      return fail((e as Error).message, found);
    }
  }
  const distinct = new Set(found.map((c) => `${c.name}+${c.keyIdHex}`)).size;
  if (distinct < policy.minCosignatures) {
    const missing = policy.witnessKeys.filter((k) => !found.some((c) => c.name === k.name && c.keyIdHex === k.keyIdHex)).map((k) => k.name);
    return fail(`${distinct} of the required ${policy.minCosignatures} witness cosignature(s) verify; missing: ${missing.join(', ') || '(no trusted witness key given)'}`, found);
  }
  return { name: 'witness_cosignatures', ok: true, detail: `${distinct} witness cosignature(s) verify: ${found.map((c) => `${c.name} at ${new Date(c.timestamp * 1000).toISOString()}`).join(', ')}`, cosignatures: found };
}

/** The log's verifier key for its checkpoints (type 0x01), for witnesses to configure. */
export function logVerifierKeyText(origin: string, publicKey: Uint8Array): string {
  return `${origin}+${toHex(noteKeyId(origin, NOTE_TYPE_ED25519, publicKey))}+${toBase64(new Uint8Array([NOTE_TYPE_ED25519, ...publicKey]))}`;
}

/** The checkpoint with extra signature lines appended (those already on it are kept once). */
export function withSignatureLines(checkpoint: string, lines: readonly string[]): string {
  const note = parseNote(checkpoint);
  const all = note.signatures.map((s) => s.line);
  for (const l of lines) if (!all.includes(l)) all.push(l);
  return formatNote(note.text, all);
}
