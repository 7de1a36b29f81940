/** Request and response schemas of the anchoring routes (OpenAPI is generated from these). */
import { z } from '../core/router.ts';

const Hex = z.string().regex(/^[0-9a-f]{64}$/).openapi({ description: 'SHA-256, lowercase hex' });
const Proof = z.array(Hex).openapi({ description: 'RFC 9162 proof hashes, leaf side first' });

export const EpochHeaderSchema = z
  .object({
    format: z.literal('svc.epoch/v1'),
    epoch_seq: z.number().int(),
    canonical_root: Hex,
    prev_epoch_digest: Hex.nullable(),
    anchored_at: z.string(),
    cadence_seconds: z.number().int(),
    epoch_digest: Hex,
    period_start: z.string(),
    period_end: z.string(),
    tenant_count: z.number().int(),
    epoch_log: z.object({ size: z.number().int(), root: Hex }),
    key_id: z.string(),
  })
  .openapi('EpochHeader');

export const EpochTimestampSchema = z
  .object({
    tsa: z.string().openapi({ description: 'The time-stamp authority URL the token came from' }),
    gen_time: z.string().openapi({ description: "The token's TSTInfo genTime, RFC 3339 UTC" }),
    token_b64: z.string().openapi({
      description:
        'The RFC 3161 TimeStampToken (CMS SignedData over TSTInfo), DER, standard base64. Its message imprint is SHA-256 over the UTF-8 bytes of ' +
        'the checkpoint body: the checkpoint note up to and including the newline before its blank line ("<origin>\\n<size>\\n<base64 root>\\n"). ' +
        'Check it with: openssl ts -verify -data body.txt -in token.der -token_in -CAfile tsa-roots.pem',
    }),
  })
  .openapi('EpochTimestamp');

export const SignedEpochHeaderSchema = z
  .object({
    header: EpochHeaderSchema,
    header_hash: Hex,
    signature: z.string().openapi({ description: 'base64url Ed25519 over the JCS bytes of header' }),
    key_id: z.string(),
    alg: z.literal('Ed25519'),
    checkpoint: z.string().openapi({ description: 'C2SP tlog-checkpoint signed note of the epoch log at this epoch' }),
    timestamp_status: z.enum(['awaiting', 'timestamped', 'not_requested']).optional().openapi({
      description:
        'RFC 3161 timestamps of the checkpoint: timestamped once a verified token from a configured authority (SVC_TSA_URLS) is stored; ' +
        'awaiting while requested and none has arrived (anchored, awaiting timestamp); not_requested when no authority was configured at close',
    }),
    timestamps: z.array(EpochTimestampSchema).optional(),
    cosigned_checkpoint: z.string().optional().openapi({
      description: 'The checkpoint with the cosignature/v1 lines of the witnesses that cosigned it (c2sp.org/tlog-cosignature); the checkpoint itself until one has',
    }),
    cosignatures: z
      .array(z.object({ witness: z.string(), key_id: z.string().openapi({ description: 'signed-note key ID, 8 hex digits' }), timestamp: z.number().int().openapi({ description: 'POSIX seconds, as the witness stated' }) }))
      .optional(),
  })
  .openapi('SignedEpochHeader');

export const InclusionProofSchema = z
  .object({
    action_key: z.string(),
    tenant_id: z.string(),
    attestation_hash: Hex,
    tenant_log: z.object({ leaf_index: z.number().int(), tree_size: z.number().int(), leaf_hash: Hex, root: Hex, proof: Proof }),
    epoch: z.object({
      epoch_seq: z.number().int(),
      leaf_index: z.number().int(),
      tree_size: z.number().int(),
      leaf: z.object({ tenant_id: z.string(), tenant_size: z.number().int(), tenant_chain_root: Hex }),
      leaf_hash: Hex,
      canonical_root: Hex,
      proof: Proof,
    }),
    epoch_header: SignedEpochHeaderSchema,
  })
  .openapi('InclusionProof');


const IntParam = (description: string) =>
  z
    .string()
    .max(15)
    .regex(/^(0|[1-9][0-9]{0,14})$/, { error: 'expected a non-negative integer' })
    .openapi({ description });

export const EpochListQuery = z.strictObject({
  after: IntParam('Only epochs with epoch_seq greater than this').optional(),
  limit: IntParam('Most epochs returned, 1 to 100 (default 50)')
    .refine((v) => Number(v) >= 1 && Number(v) <= 100, { error: 'expected an integer from 1 to 100' })
    .optional(),
});

export const EpochList = z
  .object({ epochs: z.array(SignedEpochHeaderSchema), next_after: z.number().int().nullable() })
  .openapi('EpochList');

export const EpochSeqParam = z.object({
  epoch_seq: IntParam('Epoch sequence number, from 0').openapi({ param: { name: 'epoch_seq', in: 'path' } }),
});

export const EpochConsistencyQuery = z.strictObject({
  from: IntParam('The older epoch_seq'),
  to: IntParam('The newer epoch_seq (default: the latest)').optional(),
});

const Head = z.object({ size: z.number().int(), root: Hex });
export const EpochConsistency = z
  .object({
    log: z.literal('epoch digests'),
    from: Head.extend({ epoch_seq: z.number().int() }),
    to: Head.extend({ epoch_seq: z.number().int() }),
    proof: Proof,
  })
  .openapi('EpochConsistency');

export const TenantLogHead = z
  .object({ tenant_id: z.string(), size: z.number().int(), root: Hex, anchored_size: z.number().int() })
  .openapi('TenantLogHead');

export const TenantConsistencyQuery = z.strictObject({
  from_size: IntParam('The older tree size (at least 1)'),
  to_size: IntParam('The newer tree size (default: the current size)').optional(),
});

export const TenantConsistency = z
  .object({ tenant_id: z.string(), from: Head, to: Head, proof: Proof })
  .openapi('TenantConsistency');
