/**
 * A seal's response as plain data: the body the caller will receive, with markers where the
 * sealed record's own values go (its action_key, evidence packet and verify request), filled
 * in once the record exists. Being data, not a function, the template can travel to the sealing
 * thread with its request (../seal-thread/), and the same markers are how an idempotent answer is
 * stored without a second copy of the evidence (./idempotency/replay.ts).
 */
import { jsonString } from '../../shared/canonical-json.ts';
import type { PacketFields, Seal } from '../../shared/types.ts';

/** The marker's one member: `{"$sealed": "evidence_packet"}` stands for the record's packet. */
export const MARKER = '$sealed';

export type SealedPart = 'action_key' | 'evidence_packet' | 'verify_request';

/** The record's values a template may name. */
export interface SealedParts {
  actionKey: string;
  packet: unknown;
  verifyRequest: unknown;
}

/** Markers to place in a response template. */
export const SEALED = {
  actionKey: { [MARKER]: 'action_key' },
  packet: { [MARKER]: 'evidence_packet' },
  verifyRequest: { [MARKER]: 'verify_request' },
} as const satisfies Record<string, { [MARKER]: SealedPart }>;

/** The marker's part, when `value` is a marker (an object with the one member `$sealed`). */
export function markerPart(value: unknown): SealedPart | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const part = (value as Record<string, unknown>)[MARKER];
  if (typeof part !== 'string' || Object.keys(value).length !== 1) return undefined;
  return part as SealedPart;
}

function valueOf(part: SealedPart, record: SealedParts): unknown {
  switch (part) {
    case 'action_key':
      return record.actionKey;
    case 'evidence_packet':
      return record.packet;
    case 'verify_request':
      return record.verifyRequest;
  }
}

/** The template with every marker replaced by the record's value (the record's own objects, not copies). */
export function fillResponse(template: unknown, record: SealedParts): unknown {
  const part = markerPart(template);
  if (part !== undefined) return valueOf(part, record);
  if (Array.isArray(template)) return template.map((v) => fillResponse(v, record));
  if (template !== null && typeof template === 'object') {
    return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, fillResponse(v, record)]));
  }
  return template;
}

/** The record's evidence packet and verify request as JSON text (evidenceTexts). */
export interface EvidenceTexts {
  packet: string;
  verifyRequest: string;
}

/** The markers as JSON.stringify writes them (a marker object has the one member). */
const MARKER_OPEN = `{"${MARKER}":`;
const MARKER_TEXTS = new Map<string, SealedPart>((['action_key', 'evidence_packet', 'verify_request'] as const).map((part) => [JSON.stringify({ [MARKER]: part }), part]));

/** Deepest template templateText writes; a deeper one (none is) goes through fillResponse. */
const MAX_TEMPLATE_DEPTH = 64;

/**
 * The template's JSON text, for fillResponseText: JSON.stringify's, or undefined when the
 * template is not plain JSON data (a member whose value is undefined, a Date, a class instance,
 * …), which JSON.stringify and fillResponse write differently: the caller takes fillResponse's way.
 */
export function templateText(template: unknown): string | undefined {
  return plainData(template, 0) ? JSON.stringify(template) : undefined;
}

/**
 * The answer as JSON text, JSON.stringify(fillResponse(template, record)) to the byte, written
 * by splicing: the template is stringified alone (small), and each marker's text replaced by the
 * record's value's text, so the evidence (most of an answer's bytes, the seal twice) is never
 * serialised as an object tree. `compact` is the same text with the evidence markers left in,
 * which is what an idempotent answer stores (./idempotency/replay.ts compactResponse).
 * `evidence` is asked at most once, and only when the template has an evidence marker.
 *
 * Undefined when the template is not plain JSON data (templateText) or has a marker of a part
 * other than the three, which fillResponse leaves out and JSON.stringify would not: the caller
 * takes fillResponse's way.
 */
export function fillResponseText(template: unknown, actionKey: string, evidence: () => EvidenceTexts): { text: string; compact: string } | undefined {
  const json = templateText(template);
  return json === undefined ? undefined : spliceResponse(json, actionKey, evidence);
}

/**
 * fillResponseText from the template's text (templateText), as a request crossing to the sealing
 * thread carries it. Without `compact` (an answer no idempotency key stores), `compact` is not
 * written and comes back empty.
 */
export function spliceResponse(json: string, actionKey: string, evidence: () => EvidenceTexts, compact?: true): { text: string; compact: string } | undefined;
export function spliceResponse(json: string, actionKey: string, evidence: () => EvidenceTexts, compact: boolean): { text: string; compact: string } | undefined;
export function spliceResponse(json: string, actionKey: string, evidence: () => EvidenceTexts, withCompact = true): { text: string; compact: string } | undefined {
  // Within JSON text, `{"$sealed":` can only open an object whose first member is $sealed: inside
  // a string its quotes would be escaped. With no undefined members (plainData), one written as
  // exactly a marker's text is an object with that one member: a marker (markerPart).
  let text = '';
  let compact = '';
  let from = 0;
  let texts: EvidenceTexts | undefined;
  for (let at = json.indexOf(MARKER_OPEN); at !== -1; at = json.indexOf(MARKER_OPEN, at + 1)) {
    // A marker is the one member, a string (markerPart): skip an object whose $sealed is not a
    // string or has more members after it.
    const value = at + MARKER_OPEN.length;
    if (json.charCodeAt(value) !== 0x22) continue;
    let close = value + 1;
    while (close < json.length && json.charCodeAt(close) !== 0x22) close += json.charCodeAt(close) === 0x5c ? 2 : 1;
    if (json.charCodeAt(close + 1) !== 0x7d) continue;
    const end = close + 2;
    const marker = json.slice(at, end);
    // fillResponse leaves out a marker of another part: JSON.stringify would not.
    const part = MARKER_TEXTS.get(marker);
    if (part === undefined) return undefined;
    const before = json.slice(from, at);
    if (part === 'action_key') {
      const key = jsonString(actionKey);
      text += before + key;
      if (withCompact) compact += before + key;
    } else {
      texts ??= evidence();
      text += before + (part === 'evidence_packet' ? texts.packet : texts.verifyRequest);
      if (withCompact) compact += before + marker;
    }
    from = end;
  }
  const rest = json.slice(from);
  return { text: text + rest, compact: withCompact ? compact + rest : '' };
}

/** JSON values JSON.stringify and fillResponse write alike: plain objects without undefined members, arrays, primitives. */
function plainData(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return true;
    case 'object': {
      if (value === null) return true;
      if (depth >= MAX_TEMPLATE_DEPTH) return false;
      if (Array.isArray(value)) {
        for (const item of value) if (item !== undefined && !plainData(item, depth + 1)) return false;
        return true;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        const member = (value as Record<string, unknown>)[key];
        if (member === undefined || !plainData(member, depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/** Integer-like member names, which a JavaScript object lists first, in numeric order (ECMA-262 OrdinaryOwnPropertyKeys). */
const INTEGER_NAME = /"(?:0|[1-9][0-9]*)":/;

/**
 * JSON.stringify of the record's evidence packet and verify request (shared/seal.ts
 * evidencePacket, verifyRequestFor, with the attestation parsed from its stored text) written
 * by splicing: the seal's text is made once and appears in both (interface-spec Gate response).
 *
 * The attestation's JCS text is already that object's JSON.stringify text (RFC 8785 §3.2.2
 * writes strings and numbers as ECMAScript does, and the parsed object keeps the text's member
 * order), except where a member name is an integer (JavaScript lists those first, JCS sorts them
 * as strings): then the text is parsed and stringified as the object form would be.
 */
export function evidenceTexts(fields: PacketFields, packetHash: string, seal: Omit<Seal, 'attestation'>, attestationText: string): EvidenceTexts {
  const attestation = INTEGER_NAME.test(attestationText) ? JSON.stringify(JSON.parse(attestationText)) : attestationText;
  const packet =
    `{"action_key":${json(fields.action_key)},"href":${json(fields.href)},"status":${json(fields.status)},` +
    `"packet_hash":${json(packetHash)},"seal":{"alg":${json(seal.alg)},"key_id":${json(seal.key_id)},` +
    `"dev_key":${json(seal.dev_key)},"attestation":${attestation},"attestation_hash":${json(seal.attestation_hash)},` +
    `"signature":${json(seal.signature)}}}`;
  const verifyRequest =
    `${packet.slice(0, -1)},"decision":${json(fields.decision)},"payload_hash":${json(fields.payload_hash)},` +
    `"review_route":${json(fields.review_route)}}`;
  return { packet, verifyRequest };
}

/** JSON.stringify of a member's value, a string's through jsonString (the same text, made quicker). */
function json(value: unknown): string {
  return typeof value === 'string' ? jsonString(value) : JSON.stringify(value);
}
