/**
 * GET /deployment/signer-plan: which custody holds each signing key, and what an operator does
 * to sign production receipts with a managed, non-exportable key (interface-spec "What the
 * service does" 8). Derived from the running signers only; it never names a secret (the
 * PKCS#11 PIN is a reference the plan does not repeat, KMS credentials are never known here).
 */
import { createRouter, defineRoute, jsonContent, z } from '../core/router.ts';
import type { Signer } from '../core/signer.ts';
import type { RouteDeps } from '../core/app-deps.ts';

export const SIGNER_PLAN_PATH = '/deployment/signer-plan';

const PlannedSignerSchema = z
  .object({
    role: z.enum(['sandbox', 'production']),
    kind: z.enum(['dev-seed', 'file', 'pkcs11', 'aws-kms']).openapi({ description: 'dev-seed is the public sandbox key; the others are SVC_SIGNER values' }),
    managed: z.boolean().openapi({ description: 'held by a key service (HSM, cloud KMS) that signs for the service' }),
    non_exportable: z.boolean().openapi({ description: 'the private key cannot be read out of its custody' }),
    key_id: z.string().openapi({ description: 'RFC 7638 thumbprint, as in the JWKS and every seal' }),
    algorithm: z.literal('Ed25519'),
    locators: z.record(z.string(), z.string()).openapi({ description: 'non-secret addresses of the key: file, module, token and key labels, key ARN, region' }),
    description: z.string(),
  })
  .openapi('PlannedSigner');

const SignerPlanSchema = z
  .object({
    production_custody_managed: z.boolean().openapi({ description: 'true when production receipts are signed by a managed, non-exportable key' }),
    signers: z.array(PlannedSignerSchema),
    next_steps: z.array(z.string()).openapi({ description: 'what an operator should do next, in order' }),
  })
  .openapi('SignerPlan');

type PlannedSigner = z.infer<typeof PlannedSignerSchema>;

function planned(role: PlannedSigner['role'], signer: Signer): PlannedSigner {
  const c = signer.custody;
  return {
    role,
    kind: c.kind,
    managed: c.managed,
    non_exportable: c.nonExportable,
    key_id: signer.keyId,
    algorithm: 'Ed25519',
    locators: c.locators,
    description: c.description,
  };
}

const TO_MANAGED = [
  'Choose a managed custody: SVC_SIGNER=pkcs11 (an HSM or cloud HSM through its PKCS#11 module) or SVC_SIGNER=aws-kms (an AWS KMS ECC_NIST_EDWARDS25519 SIGN_VERIFY key); README "Signing custody" lists their settings.',
  'Create the key inside that service so it is never exportable (PKCS#11: CKA_EXTRACTABLE=false and CKA_SENSITIVE=true, or SVC_PKCS11_CREATE_KEY=1 once; KMS: create-key --key-spec ECC_NIST_EDWARDS25519 --key-usage SIGN_VERIFY).',
  'Before the restart, save /.well-known/service-keys.json: the new production key_id replaces the old one there, and verifiers of receipts the old key signed need the saved copy.',
  'Restart with the new settings (startup refuses an extractable key and checks one signature against the key it publishes), then remove the old key file and its backups.',
];

/** Next steps from the production signer's custody. */
function nextSteps(production: Signer): string[] {
  const c = production.custody;
  if (!c.managed || !c.nonExportable) return TO_MANAGED;
  const steps: string[] = [];
  if (c.kind === 'pkcs11' && /softhsm/i.test(c.locators.module ?? '')) {
    steps.push('SoftHSM2 is a software token whose key files live on this host: for production, point SVC_PKCS11_MODULE at a hardware or cloud HSM module and create the key there.');
  }
  steps.push(
    'Production custody is managed and non-exportable. Restrict who may use the key (token user PIN, or the KMS key policy allowing kms:Sign and kms:GetPublicKey to this service only) and audit its use (the HSM log, or CloudTrail).',
  );
  return steps;
}

export function signerPlanRoutes(deps: RouteDeps) {
  const router = createRouter();
  const route = defineRoute({
    method: 'get',
    path: SIGNER_PLAN_PATH,
    operationId: 'getSignerPlan',
    tags: ['control-plane'],
    auth: 'public',
    summary: 'Signing custody: which key service holds each signing key, and how to move production to a managed one',
    responses: { 200: jsonContent(SignerPlanSchema, 'The running signers and the next steps; never a secret') },
  });
  router.openapi(route, (c) => {
    const { sandbox, production } = deps.keyring;
    return c.json(
      {
        production_custody_managed: production.custody.managed && production.custody.nonExportable,
        signers: [planned('sandbox', sandbox), planned('production', production)],
        next_steps: nextSteps(production),
      },
      200,
    );
  });
  return router;
}
