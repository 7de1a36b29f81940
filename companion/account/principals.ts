/**
 * Principals: who a credential acts for (interface-spec Authentication 1, 2). A person
 * (per_…, with a role, capabilities, optional display name and email, active or deactivated) or a
 * named service account (sva_…, tenant-scoped, for automation and integrations). Both engines
 * read a credential's principal with the same outer joins; this maps their row to the principal.
 */
import { effectiveCapabilities } from '../core/auth.ts';
import type { Capability, Principal, PrincipalKind } from '../core/auth.ts';

export type PrincipalStatus = 'active' | 'deactivated';

/** A principal as stored, before any key narrows it. */
export interface PrincipalRecord extends Principal {
  tenantId: string;
  /** people.role; null for a service account. */
  role: 'owner' | 'member' | null;
  email: string | null;
  status: PrincipalStatus;
  /** What was granted (an owner's list is not used: an owner holds everything). */
  granted: string[];
  createdAt: string;
}

/** The person or service account columns of a credential's row (all null when there is none). */
export interface PrincipalJoinRow {
  tenant_id: string;
  key_capabilities: string | null;
  person_id: string | null;
  person_role: 'owner' | 'member' | null;
  person_capabilities: string | null;
  person_status: PrincipalStatus | null;
  person_display_name: string | null;
  person_email: string | null;
  person_created_at: string | null;
  sa_id: string | null;
  sa_name: string | null;
  sa_capabilities: string | null;
  sa_status: PrincipalStatus | null;
  sa_created_at: string | null;
}

/** The SELECT list for PrincipalJoinRow, over aliases k (api_keys), p (people), a (service_accounts). */
export const PRINCIPAL_COLUMNS = `k.tenant_id, k.capabilities AS key_capabilities,
  p.id AS person_id, p.role AS person_role, p.capabilities AS person_capabilities, p.status AS person_status,
  p.display_name AS person_display_name, p.email AS person_email, p.created_at AS person_created_at,
  a.id AS sa_id, a.name AS sa_name, a.capabilities AS sa_capabilities, a.status AS sa_status, a.created_at AS sa_created_at`;

/** The principal of the row, its capabilities narrowed by the key's subset when `withKey`. */
export function principalFromJoin(row: PrincipalJoinRow, withKey = true): PrincipalRecord | undefined {
  const subset = withKey && row.key_capabilities !== null ? (JSON.parse(row.key_capabilities) as string[]) : null;
  if (row.person_id !== null) {
    const granted = JSON.parse(row.person_capabilities ?? '[]') as string[];
    return {
      id: row.person_id,
      kind: 'person',
      tenantId: row.tenant_id,
      displayName: personName(row.person_display_name, row.person_email, row.person_id),
      capabilities: effectiveCapabilities(row.person_role, granted, subset),
      role: row.person_role,
      email: row.person_email,
      status: row.person_status ?? 'active',
      granted,
      createdAt: row.person_created_at ?? '',
    };
  }
  if (row.sa_id !== null) {
    const granted = JSON.parse(row.sa_capabilities ?? '[]') as string[];
    return {
      id: row.sa_id,
      kind: 'service_account',
      tenantId: row.tenant_id,
      displayName: row.sa_name ?? row.sa_id,
      capabilities: effectiveCapabilities(null, granted, subset),
      role: null,
      email: null,
      status: row.sa_status ?? 'active',
      granted,
      createdAt: row.sa_created_at ?? '',
    };
  }
  return undefined;
}

/** A person's name as listings and receipts show it: the display name, else the email, else the id. */
export function personName(displayName: string | null, email: string | null, id: string): string {
  return displayName ?? email ?? id;
}

export function principalKindOf(id: string): PrincipalKind | undefined {
  if (id.startsWith('per_')) return 'person';
  if (id.startsWith('sva_')) return 'service_account';
  return undefined;
}

/** Capabilities in CAPABILITIES order, without repeats. */
export function sortedCapabilities(list: readonly Capability[]): Capability[] {
  return effectiveCapabilities(null, list, null);
}
