/**
 * A seal's response as plain data: the body the caller will receive, with markers where the
 * sealed record's own values go (its action_key, evidence packet and verify request), filled
 * in once the record exists. Being data, not a function, the template can travel to the sealing
 * thread with its request (../seal-thread/), and the same markers are how an idempotent answer is
 * stored without a second copy of the evidence (./idempotency/replay.ts).
 */

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
