/**
 * C2SP signed notes (https://c2sp.org/signed-note): parsing a note into its text and signature
 * lines, verifier keys (`<name>+<hex key ID>+<base64(type ‖ public key)>`) and key IDs, and
 * verifying Ed25519 (type 0x01) note signatures. Cosignatures (type 0x04) are ./witness.ts.
 * Browser-safe; hostile input throws RangeError naming what is malformed, never anything else.
 */
import { verifyEd25519 } from './ed25519.ts';
import { constantTimeEqual, fromBase64Url, toBase64, toHex, utf8 } from './encoding.ts';
import { sha256 } from './hash.ts';

/** signed-note "Signature types": Ed25519 note signatures. */
export const NOTE_TYPE_ED25519 = 0x01;
/** signed-note "Signature types": timestamped Ed25519 witness cosignatures (c2sp.org/tlog-cosignature). */
export const NOTE_TYPE_COSIGNATURE_V1 = 0x04;

/** Each signature line starts with U+2014 EM DASH and a space. */
export const SIGNATURE_LINE_PREFIX = '\u2014 ';

/**
 * signed-note "Verifiers SHOULD apply a maximum limit to the number of signatures … but MUST
 * accept at least up to 16": a checkpoint with its log signature and a generous witness set.
 */
export const MAX_NOTE_SIGNATURES = 64;
/** The longest note accepted (the limit above expressed as size, with room for the text). */
export const MAX_NOTE_BYTES = 64 * 1024;

export interface NoteSignature {
  name: string;
  /** The 4-byte key ID the line starts with. */
  keyId: Uint8Array;
  /** The bytes after the key ID (for a cosignature: timestamp ‖ signature). */
  signature: Uint8Array;
  /** The line as it appeared, without its newline. */
  line: string;
}

export interface Note {
  /** The signed text: everything before the last blank line, ending in a newline. */
  text: string;
  signatures: NoteSignature[];
}

export interface VerifierKey {
  name: string;
  /** The key ID as 8 lowercase hex digits. */
  keyIdHex: string;
  keyId: Uint8Array;
  type: number;
  publicKey: Uint8Array;
  /** The verifier key text it was parsed from (or would print as). */
  vkey: string;
}

/** Standard base64 (RFC 4648 §4) with padding, strictly: no whitespace, no missing padding. */
export function fromStdBase64(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) throw new RangeError('expected standard base64');
  const bytes = fromBase64Url(text.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'));
  // Re-encoding must give the same text: refuses non-zero spare bits (non-canonical base64).
  if (toBase64(bytes) !== text) throw new RangeError('expected canonical base64');
  return bytes;
}

/** signed-note: key names are non-empty, without Unicode spaces or '+'. */
export function checkKeyName(name: string): void {
  if (name === '' || /[\s+\u0085\u00a0\u1680\u180e\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]/u.test(name)) {
    throw new RangeError('expected a key name without spaces or "+"');
  }
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new RangeError('expected a key name without control characters');
}

/** signed-note key ID: SHA-256(key name ‖ 0x0A ‖ signature type ‖ public key)[:4]. */
export function noteKeyId(name: string, type: number, publicKey: Uint8Array): Uint8Array {
  const nameBytes = utf8(name);
  const input = new Uint8Array(nameBytes.length + 2 + publicKey.length);
  input.set(nameBytes);
  input[nameBytes.length] = 0x0a;
  input[nameBytes.length + 1] = type;
  input.set(publicKey, nameBytes.length + 2);
  return sha256(input).slice(0, 4);
}

/** The verifier key text of an Ed25519 key of `type` (0x01 note signer, 0x04 cosigner). */
export function formatVerifierKey(name: string, type: number, publicKey: Uint8Array): string {
  checkKeyName(name);
  const typed = new Uint8Array(1 + publicKey.length);
  typed[0] = type;
  typed.set(publicKey, 1);
  return `${name}+${toHex(noteKeyId(name, type, publicKey))}+${toBase64(typed)}`;
}

/**
 * Parses `<name>+<hex key ID>+<base64(type ‖ public key)>`; the key ID must be the derivation
 * from the rest (signed-note "It is RECOMMENDED that key IDs be …"), so a mistyped key cannot
 * silently match another. Only Ed25519 types (0x01, 0x04) with 32-byte keys are accepted.
 */
export function parseVerifierKey(vkey: string): VerifierKey {
  if (typeof vkey !== 'string' || vkey.length > 1024) throw new RangeError('expected a verifier key of at most 1024 characters');
  // The base64 may itself contain '+': the name ends at the first '+', the key ID is 8 hex digits.
  const first = vkey.indexOf('+');
  if (first <= 0 || vkey.length < first + 10 || vkey[first + 9] !== '+') {
    throw new RangeError('expected <name>+<8 hex digits>+<base64>');
  }
  const name = vkey.slice(0, first);
  checkKeyName(name);
  const keyIdHex = vkey.slice(first + 1, first + 9);
  if (!/^[0-9a-f]{8}$/.test(keyIdHex)) throw new RangeError('expected the key ID as 8 lowercase hex digits');
  const typed = fromStdBase64(vkey.slice(first + 10));
  if (typed.length !== 33) throw new RangeError(`expected a type byte and a 32-byte Ed25519 key, got ${typed.length} bytes`);
  const type = typed[0]!;
  if (type !== NOTE_TYPE_ED25519 && type !== NOTE_TYPE_COSIGNATURE_V1) throw new RangeError(`expected key type 0x01 or 0x04, got 0x${type.toString(16).padStart(2, '0')}`);
  const publicKey = typed.slice(1);
  const keyId = noteKeyId(name, type, publicKey);
  if (toHex(keyId) !== keyIdHex) throw new RangeError(`key ID ${keyIdHex} is not derived from the name and key (expected ${toHex(keyId)})`);
  return { name, keyIdHex, keyId, type, publicKey, vkey };
}

/** One signature line: `— <name> base64(key ID ‖ signature)`. */
export function signatureLine(name: string, keyId: Uint8Array, signature: Uint8Array): string {
  checkKeyName(name);
  const blob = new Uint8Array(keyId.length + signature.length);
  blob.set(keyId);
  blob.set(signature, keyId.length);
  return `${SIGNATURE_LINE_PREFIX}${name} ${toBase64(blob)}`;
}

/** Parses one signature line (without its newline). */
export function parseSignatureLine(line: string): NoteSignature {
  if (!line.startsWith(SIGNATURE_LINE_PREFIX)) throw new RangeError('expected a signature line starting with "— "');
  const parts = line.slice(SIGNATURE_LINE_PREFIX.length).split(' ');
  if (parts.length !== 2) throw new RangeError('expected "— <name> <base64>"');
  const [name, blobText] = parts as [string, string];
  checkKeyName(name);
  const blob = fromStdBase64(blobText);
  if (blob.length < 5) throw new RangeError('expected a key ID and a signature');
  return { name, keyId: blob.slice(0, 4), signature: blob.slice(4), line };
}

/**
 * Splits a signed note at its last blank line into text and signature lines (signed-note
 * "Format"). Refuses control characters other than newline, notes over MAX_NOTE_BYTES and
 * more than MAX_NOTE_SIGNATURES lines.
 */
export function parseNote(note: string): Note {
  if (typeof note !== 'string') throw new RangeError('expected a note as text');
  if (note.length > MAX_NOTE_BYTES) throw new RangeError(`expected a note of at most ${MAX_NOTE_BYTES} characters`);
  if (/[\u0000-\u0009\u000b-\u001f]/.test(note)) throw new RangeError('expected no control characters but newline');
  if (!note.endsWith('\n')) throw new RangeError('expected a note ending in a newline');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new RangeError('expected a note text, a blank line and signature lines');
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  if (lines.length === 0 || lines[0] === '') throw new RangeError('expected at least one signature line');
  if (lines.length > MAX_NOTE_SIGNATURES) throw new RangeError(`expected at most ${MAX_NOTE_SIGNATURES} signatures`);
  return { text, signatures: lines.map(parseSignatureLine) };
}

/** The note again, from its text and signature lines. */
export function formatNote(text: string, lines: readonly string[]): string {
  return `${text}\n${lines.map((l) => `${l}\n`).join('')}`;
}

/** The lines of `note` whose (name, key ID) is `key`'s: signed-note identifies a key by both. */
export function signaturesOf(note: Note, key: Pick<VerifierKey, 'name' | 'keyId'>): NoteSignature[] {
  return note.signatures.filter((s) => s.name === key.name && constantTimeEqual(s.keyId, key.keyId));
}

/** Whether an Ed25519 (0x01) signature line of `key` verifies over the note text. */
export async function verifyNoteSignature(note: Note, key: VerifierKey): Promise<boolean> {
  if (key.type !== NOTE_TYPE_ED25519) return false;
  for (const s of signaturesOf(note, key)) {
    if (s.signature.length === 64 && (await verifyEd25519(key.publicKey, utf8(note.text), s.signature))) return true;
  }
  return false;
}
