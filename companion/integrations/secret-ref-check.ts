/**
 * The check of a secret reference a tenant configures (interface-spec "Webhook integration"
 * secret_ref, "Other route integrations"): a well-formed reference (else it may be raw secret
 * material), in a scheme this service can resolve (else it would wait on a secret forever),
 * granted to this tenant. The value is never echoed: it may be the secret itself.
 */
import type { FieldError } from '../core/errors.ts';
import { SECRET_REF_FORMS } from '../core/secret-refs.ts';
import type { SecretResolver } from '../core/secret-refs.ts';

export function secretRefErrors(secrets: SecretResolver, tenantId: string, path: string, value: string): FieldError[] {
  const at = { in: 'body' as const, path };
  switch (secrets.refusal(tenantId, value)) {
    case null:
      return [];
    case 'not_a_reference':
      return [{ ...at, code: 'raw_secret_material', message: `expected a secret reference (${SECRET_REF_FORMS}); raw secret material is not accepted` }];
    case 'provider_unavailable':
      return [{ ...at, code: 'secret_provider_unavailable', message: 'this service has no provider for the reference\'s scheme: the operator has not configured it, or this build cannot resolve it' }];
    case 'not_granted':
      return [{ ...at, code: 'secret_ref_not_granted', message: 'the operator has not granted this reference to this tenant (SVC_SECRET_GRANTS; secret://tenants/{tenant_id}/… needs no grant)' }];
  }
}
