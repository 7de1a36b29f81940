/**
 * The law grading mirror (interface-spec "Review request": mirror_grades, mirror_version,
 * mirror_digest; Endpoints GET /law/grading-mirror; Versioning: "The public law grading rubric
 * is pinned and identified by mirror_version and mirror_digest").
 *
 * The rubric is data: five dimensions, each with what PASS, PARTIAL, FAIL and NA mean, in
 * plain employee-safe words (no statute or rule text). mirror_digest = SHA-256 of the rubric's
 * RFC 8785 (JCS) bytes, so anyone holding the published rubric recomputes it, and a review's
 * grades are bound to exactly the rubric the reviewer graded against. The mirror tuple that a
 * review seals is {mirror_version, mirror_digest, mirror_grades}: a version string, a digest
 * and five enum values; no raw legal text can enter it.
 */
import { canonicalBytes } from '../../shared/canonical-json.ts';
import { sha256Hex } from '../../shared/hash.ts';

export const MIRROR_VERSION = 'law-mirror/1';

/** interface-spec "Review request": exactly these five keys. */
export const MIRROR_KEYS = ['citation_support', 'privilege_boundary', 'supervision_route', 'client_confidentiality', 'filing_readiness'] as const;
export type MirrorKey = (typeof MIRROR_KEYS)[number];

export const MIRROR_GRADES = ['PASS', 'PARTIAL', 'FAIL', 'NA'] as const;
export type MirrorGrade = (typeof MIRROR_GRADES)[number];

export type MirrorGrades = Record<MirrorKey, MirrorGrade>;

/** The tuple a law review seals inside its receipt (attestation context.mirror). */
export interface MirrorTuple {
  mirror_version: string;
  mirror_digest: string;
  mirror_grades: MirrorGrades;
}

interface Dimension {
  key: MirrorKey;
  title: string;
  question: string;
  grades: Record<MirrorGrade, string>;
}

const dimensions: Dimension[] = [
  {
    key: 'citation_support',
    title: 'Citation support',
    question: 'Does every authority the action relies on exist, say what the action claims, and has a person checked it?',
    grades: {
      PASS: 'Every authority was checked by a person against its source and supports the point made.',
      PARTIAL: 'Authorities exist, but at least one was not checked against its source or only partly supports the point.',
      FAIL: 'At least one authority could not be found or does not support the point made.',
      NA: 'The action relies on no authorities.',
    },
  },
  {
    key: 'privilege_boundary',
    title: 'Privilege boundary',
    question: 'Does the action keep privileged material and work product inside the people and tools entitled to it?',
    grades: {
      PASS: 'No privileged material or work product leaves the privileged circle.',
      PARTIAL: 'Privileged material stays inside, but the boundary depends on a step not yet confirmed.',
      FAIL: 'Privileged material or work product would reach someone or something outside the privileged circle.',
      NA: 'No privileged material or work product is involved.',
    },
  },
  {
    key: 'supervision_route',
    title: 'Supervision route',
    question: 'Has the responsible lawyer who supervises this work reviewed it, through the route the firm requires?',
    grades: {
      PASS: 'The supervising lawyer reviewed it through the required route.',
      PARTIAL: 'A lawyer reviewed it, but not the supervising lawyer or not through the required route.',
      FAIL: 'No lawyer reviewed it.',
      NA: 'The firm requires no supervision for this kind of action.',
    },
  },
  {
    key: 'client_confidentiality',
    title: 'Client confidentiality',
    question: 'Is client information shared only as far as the client agreed and the matter needs?',
    grades: {
      PASS: 'Client information is shared only with documented consent and only as far as the matter needs.',
      PARTIAL: 'Sharing is needed for the matter, but consent is not yet documented or the scope is broader than needed.',
      FAIL: 'Client information would be shared without consent or beyond what the matter needs.',
      NA: 'No client information is involved.',
    },
  },
  {
    key: 'filing_readiness',
    title: 'Filing readiness',
    question: 'If the action files or serves something, is it complete, accurate, signed by a responsible lawyer and on time?',
    grades: {
      PASS: 'Complete, accurate, signed by a responsible lawyer and within the deadline.',
      PARTIAL: 'Ready except for a correctable gap (a missing signature, exhibit or format detail).',
      FAIL: 'Not fit to file or serve: inaccurate, incomplete or past its deadline.',
      NA: 'Nothing is filed or served.',
    },
  },
];

/** The published rubric; its JCS bytes are what mirror_digest commits to. */
export const MIRROR_RUBRIC = deepFreeze({
  mirror_version: MIRROR_VERSION,
  title: 'Law grading mirror',
  purpose:
    'A public rubric a reviewer grades a paused law action against. The grades, this version and the digest of this rubric are sealed with the review decision; no legal text enters them.',
  grade_values: [...MIRROR_GRADES],
  dimensions,
  claim_boundary:
    'Grades record a reviewer’s structured judgement as evidence. They are not legal advice, a certification of compliance or legal approval.',
});

/** SHA-256 hex of the JCS bytes of MIRROR_RUBRIC (RFC 8785; DESIGN.md §3). */
export const MIRROR_DIGEST = sha256Hex(canonicalBytes(MIRROR_RUBRIC));

/** Where a mirror seal is verified (published by GET /law/grading-mirror and in each mirror_seal). */
export const MIRROR_VERIFY_PATH = '/law/grading-mirror/verify';

/** The published rubric by version; only the current version today. */
export function publishedRubric(version: string): { rubric: typeof MIRROR_RUBRIC; digest: string } | undefined {
  return version === MIRROR_VERSION ? { rubric: MIRROR_RUBRIC, digest: MIRROR_DIGEST } : undefined;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
