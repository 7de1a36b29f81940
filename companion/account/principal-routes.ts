/**
 * People, service accounts and API keys on the account API (interface-spec Account table,
 * Authentication 1 and 2), each behind people:manage, for a session or a key whose principal
 * holds it: add and change people, deactivate and reactivate them (their keys and sessions stop
 * on the next request, in every process: credential lookups are re-read or re-validated per
 * request, account/sqlite-store.ts); create, list, rotate and revoke keys; the audit list of
 * admin receipts (./admin-receipts.ts), each change sealed in the same transaction as the
 * change itself.
 *
 * Least privilege, enforced here and not only in the console:
 * - a grant can only add capabilities the acting principal holds (owners hold all);
 * - only an owner changes a role, or changes an owner; the last active owner can be neither
 *   deactivated nor demoted (409 last_owner, decided under the store's lock);
 * - keys are minted only for oneself or a service account, never for another person (that
 *   would hand the actor a credential in someone else's name), and a key never carries more
 *   than the acting principal may do.
 */
import { ProblemError } from '../core/errors.ts';
import type { FieldError } from '../core/errors.ts';
import { CAPABILITIES, DEFAULT_CAPABILITIES, effectiveCapabilities, generateApiKey } from '../core/auth.ts';
import type { AuthenticatedContext, Capability } from '../core/auth.ts';
import { rfc3339 } from '../core/clock.ts';
import { createRouter, defineRoute, jsonBody, jsonContent, problemContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { EvidencePacket, VerifyRequest } from '../evidence/schemas.ts';
import { viewRecord } from '../evidence/record-view.ts';
import { ADMIN_ACTIONS, sealAdminChange } from './admin-receipts.ts';
import { identityRoutes } from './identities.ts';
import type { AdminAction, AdminChange } from './admin-receipts.ts';
import type { PrincipalRecord } from './principals.ts';
import { sortedCapabilities } from './principals.ts';
import { emailDigest, normaliseEmail } from './signup.ts';
import type { ApiKeyDetail, NewApiKeyRow, PersonRecord, PrincipalChange } from './store.ts';

/** interface-spec: a rotated key's overlap is bounded; a week covers any deploy cycle. */
export const MAX_OVERLAP_SECONDS = 7 * 24 * 3600;
export const AUDIT_LIMIT_MAX = 100;

const CapabilitySchema = z.enum(CAPABILITIES);
const CapabilityList = z.array(CapabilitySchema).max(CAPABILITIES.length);
const Status = z.enum(['active', 'deactivated']);
const PersonIdParam = z.object({ person_id: z.string().min(1).max(64) });
const ServiceAccountIdParam = z.object({ service_account_id: z.string().min(1).max(64) });
const KeyIdParam = z.object({ key_id: z.string().min(1).max(64) });
// RFC 3339 in UTC with milliseconds or not; compared as instants.
const Instant = z.iso.datetime({ offset: false }).max(40).openapi({ example: '2026-06-01T00:00:00Z' });

const PrincipalRefSchema = z
  .object({ id: z.string(), kind: z.enum(['person', 'service_account']), display_name: z.string() })
  .openapi('PrincipalSummary');

const ReceiptRef = z
  .object({ action_key: z.string().openapi({ description: 'The sealed admin receipt; GET /v1/records/{action_key} or GET /account/audit shows it' }) })
  .openapi('AdminReceiptRef');

const PersonDetail = z
  .object({
    id: z.string().openapi({ example: 'per_01JD3Q8Z5V7N4M2K6H8G0F1E2D' }),
    kind: z.literal('person'),
    role: z.enum(['owner', 'member']),
    display_name: z.string().nullable(),
    email: z.string().nullable(),
    status: Status,
    capabilities: z.array(CapabilitySchema).openapi({ description: 'What the person may do (an owner: every capability)' }),
    created_at: z.string(),
  })
  .openapi('PersonDetail');

const ServiceAccount = z
  .object({
    id: z.string().openapi({ example: 'sva_01JD3Q8Z5V7N4M2K6H8G0F1E2D' }),
    kind: z.literal('service_account'),
    name: z.string(),
    status: Status,
    capabilities: z.array(CapabilitySchema),
    created_at: z.string(),
  })
  .openapi('ServiceAccount');

const ApiKeyInfo = z
  .object({
    id: z.string(),
    prefix: z.enum(['svc_test_', 'svc_live_']),
    last_four: z.string(),
    label: z.string().nullable(),
    principal: PrincipalRefSchema,
    capabilities: z.array(CapabilitySchema).openapi({ description: "What the key may do now: its principal's capabilities within its subset" }),
    capability_subset: z.array(CapabilitySchema).nullable().openapi({ description: "The key's own subset; null: all of its principal's" }),
    status: z.enum(['active', 'expired', 'revoked']),
    created_at: z.string(),
    expires_at: z.string().nullable(),
    last_used_at: z.string().nullable().openapi({ description: 'Last successful request, to within 15 minutes' }),
    revoked_at: z.string().nullable(),
  })
  .openapi('ApiKeyInfo');

const NewPersonRequest = z
  .object({
    email: z.string().trim().toLowerCase().max(254).check(z.email()),
    display_name: z.string().trim().min(1).max(200).optional(),
    capabilities: CapabilityList.openapi({ description: `Granted in addition to the defaults every person holds (${DEFAULT_CAPABILITIES.join(', ')})` }),
  })
  .strict()
  .openapi('NewPersonRequest');

const NewPersonResponse = z
  .object({
    person: PersonDetail,
    api_key: z.string().openapi({ description: 'Shown once; only its hash is stored' }),
    api_key_id: z.string(),
    key_prefix: z.enum(['svc_test_', 'svc_live_']),
    key_last_four: z.string(),
    receipt: ReceiptRef,
  })
  .openapi('NewPersonResponse');

const PersonPatch = z
  .object({
    capabilities: CapabilityList.optional().openapi({ description: 'The complete new list (replaces the old one)' }),
    role: z.enum(['owner', 'member']).optional().openapi({ description: 'Owners only' }),
    status: Status.optional().openapi({ description: "deactivated: the person's keys and sessions are refused from the next request on" }),
    display_name: z.string().trim().min(1).max(200).optional(),
  })
  .strict()
  .openapi('PersonPatch');

const NewServiceAccountRequest = z
  .object({
    name: z.string().trim().min(1).max(200),
    capabilities: CapabilityList.optional().openapi({ description: `Granted in addition to the defaults (${DEFAULT_CAPABILITIES.join(', ')})` }),
  })
  .strict()
  .openapi('NewServiceAccountRequest');

const ServiceAccountPatch = z
  .object({
    capabilities: CapabilityList.optional().openapi({ description: 'The complete new list (replaces the old one)' }),
    status: Status.optional(),
    name: z.string().trim().min(1).max(200).optional(),
  })
  .strict()
  .openapi('ServiceAccountPatch');

const NewKeyRequest = z
  .object({
    principal_id: z.string().min(1).max(64).optional().openapi({ description: 'Yourself (the default) or one of the tenant’s service accounts (sva_…)' }),
    label: z.string().trim().min(1).max(200).optional(),
    capabilities: CapabilityList.optional().openapi({ description: "The key's subset of its principal's capabilities; absent: all of them" }),
    expires_at: Instant.optional(),
  })
  .strict()
  .openapi('NewApiKeyRequest');

const NewKeyResponse = z
  .object({
    api_key: z.string().openapi({ description: 'Shown once; only its hash is stored' }),
    key: ApiKeyInfo,
    receipt: ReceiptRef,
  })
  .openapi('NewApiKeyResponse');

const RotateRequest = z
  .object({
    overlap_seconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_OVERLAP_SECONDS)
      .optional()
      .openapi({ description: `How long the old key keeps working (0, the default: it stops at once; at most ${MAX_OVERLAP_SECONDS})` }),
    expires_at: Instant.optional().openapi({ description: "The new key's expiry; absent: the old key's" }),
  })
  .strict()
  .openapi('ApiKeyRotationRequest');

const RotateResponse = z
  .object({
    api_key: z.string().openapi({ description: 'The new key, shown once' }),
    key: ApiKeyInfo,
    previous_key: ApiKeyInfo,
    receipt: ReceiptRef,
  })
  .openapi('ApiKeyRotation');

const AuditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(AUDIT_LIMIT_MAX).optional(),
  before: z.string().min(1).max(64).optional().openapi({ description: 'next_before from the previous page' }),
});

const AdminReceipt = z
  .object({
    action_key: z.string(),
    action: z.enum(ADMIN_ACTIONS),
    actor_id: z.string(),
    subject_id: z.string(),
    created_at: z.string(),
    facts: z.record(z.string(), z.unknown()).openapi({ description: 'What the attestation commits: actor, subject, action, capability digests' }),
    href: z.string(),
    evidence_packet: EvidencePacket,
    verify_request: VerifyRequest,
  })
  .openapi('AdminReceipt');

const AuditPage = z
  .object({ receipts: z.array(AdminReceipt), next_before: z.string().nullable() })
  .openapi('AdminAuditPage');

function personBody(p: PrincipalRecord) {
  return {
    id: p.id,
    kind: 'person' as const,
    role: p.role ?? 'member',
    display_name: p.displayName === p.email || p.displayName === p.id ? null : p.displayName,
    email: p.email,
    status: p.status,
    capabilities: p.capabilities,
    created_at: p.createdAt,
  };
}

function serviceAccountBody(p: PrincipalRecord) {
  return { id: p.id, kind: 'service_account' as const, name: p.displayName, status: p.status, capabilities: p.capabilities, created_at: p.createdAt };
}

function keyStatus(k: ApiKeyDetail, now: string): 'active' | 'expired' | 'revoked' {
  if (k.status === 'revoked') return 'revoked';
  return k.expiresAt !== null && k.expiresAt <= now ? 'expired' : 'active';
}

function keyBody(k: ApiKeyDetail, principals: Map<string, PrincipalRecord>, now: string) {
  const p = principals.get(k.principalId);
  return {
    id: k.id,
    prefix: k.prefix,
    last_four: k.lastFour,
    label: k.label,
    principal: { id: k.principalId, kind: p?.kind ?? 'service_account', display_name: p?.displayName ?? k.principalId },
    capabilities: p ? effectiveCapabilities(p.role, p.granted, k.capabilities) : [],
    capability_subset: k.capabilities === null ? null : sortedCapabilities(k.capabilities.filter((c): c is Capability => (CAPABILITIES as readonly string[]).includes(c))),
    status: keyStatus(k, now),
    created_at: k.createdAt,
    expires_at: k.expiresAt,
    last_used_at: k.lastUsedAt,
    revoked_at: k.revokedAt,
  };
}

/** 403 when a grant or a key would carry a capability the acting principal does not hold. */
function notHeld(missing: readonly string[], field: string, indexOf: (c: string) => number | undefined): ProblemError {
  const errors: FieldError[] = missing.map((c) => {
    const i = indexOf(c);
    return { in: 'body', path: i === undefined ? field : `${field}/${i}`, message: `you do not hold ${c}, so you cannot give it`, code: 'capability_not_held' };
  });
  return new ProblemError({
    status: 403,
    code: 'capability_not_held',
    detail: `only capabilities the acting principal holds can be given: ${missing.join(', ')}`,
    errors,
    extra: { capabilities: missing },
  });
}

export function principalRoutes(deps: RouteDeps) {
  const router = createRouter();
  const { account } = deps.store;
  const now = () => rfc3339(deps.clock.now());
  const auth = deps.auth.keyOrSession('people:manage');
  const receiptDeps = { sealer: deps.sealer };
  const tags = ['account'];

  const actor = (c: { var: { auth: unknown } }) => c.var.auth as AuthenticatedContext;
  const actorRecord = async (a: AuthenticatedContext) => account.getPrincipal(a.tenantId, a.principal.id);
  const principalsOf = async (tenantId: string) => new Map((await account.listPrincipals(tenantId)).map((p) => [p.id, p]));

  /** Capabilities `after` adds to `before` must all be held by the actor. */
  const checkGrant = (a: AuthenticatedContext, before: readonly string[], after: readonly string[], field: string) => {
    const had = new Set(before);
    const added = after.filter((c) => !had.has(c));
    const missing = added.filter((c) => !a.principal.capabilities.includes(c as Capability));
    if (missing.length > 0) throw notHeld(missing, field, (c) => after.indexOf(c));
  };

  const seal = <T>(a: AuthenticatedContext, change: AdminChange, apply: Parameters<typeof sealAdminChange<T>>[3]) => sealAdminChange<T>(receiptDeps, a, change, apply);

  // ---- people ----

  const addPerson = defineRoute({
    method: 'post',
    path: '/account/people',
    operationId: 'createPerson',
    tags,
    auth,
    summary: 'Add a person with chosen capabilities (people:manage) and mint their API key; sealed as an admin receipt',
    request: { body: jsonBody(NewPersonRequest) },
    responses: {
      201: jsonContent(NewPersonResponse, 'The person and their key, shown once'),
      409: problemContent('person_exists: this email is already a person of the tenant'),
    },
  });
  router.openapi(addPerson, async (c) => {
    const body = c.req.valid('json');
    const a = actor(c);
    const capabilities = sortedCapabilities([...DEFAULT_CAPABILITIES, ...body.capabilities]);
    checkGrant(a, DEFAULT_CAPABILITIES, capabilities, '/capabilities');
    const email = normaliseEmail(body.email);
    const personId = deps.ids.next('per');
    const apiKey = generateApiKey(a.tenantKind);
    const keyId = deps.ids.next('key');
    const { actionKey, result } = await seal(
      a,
      { action: 'person.added', subjectId: personId, subjectKind: 'person', before: null, after: capabilities, related: { key_id: keyId } },
      async (tx, at) => {
        const person: PersonRecord = { id: personId, tenantId: a.tenantId, emailDigest: emailDigest(email), role: 'member', capabilities, createdAt: at, displayName: body.display_name ?? null, email };
        const key: NewApiKeyRow = { id: keyId, tenantId: a.tenantId, keyHash: apiKey.hash, prefix: apiKey.prefix, lastFour: apiKey.lastFour, createdAt: at, personId };
        if ((await tx.account.addPerson(person, key)) === 'email_taken') throw ProblemError.conflict('person_exists', 'this email is already a person of this tenant');
        return (await tx.account.getPrincipal(a.tenantId, personId))!;
      },
    );
    c.header('cache-control', 'no-store');
    return c.json({ person: personBody(result), api_key: apiKey.key, api_key_id: keyId, key_prefix: apiKey.prefix, key_last_four: apiKey.lastFour, receipt: { action_key: actionKey } }, 201);
  });

  const listPeople = defineRoute({
    method: 'get',
    path: '/account/people',
    operationId: 'listPeople',
    tags,
    auth,
    summary: "The tenant's people with their capabilities and status (people:manage)",
    responses: { 200: jsonContent(z.object({ people: z.array(PersonDetail) }).openapi('PeopleList'), 'Oldest first') },
  });
  router.openapi(listPeople, async (c) => {
    const all = await account.listPrincipals(actor(c).tenantId);
    return c.json({ people: all.filter((p) => p.kind === 'person').map(personBody) }, 200);
  });

  const patchPerson = defineRoute({
    method: 'patch',
    path: '/account/people/{person_id}',
    operationId: 'updatePerson',
    tags,
    auth,
    summary: "Change a person's capabilities, role, name, or deactivate / reactivate them (people:manage); sealed as an admin receipt",
    request: { params: PersonIdParam, body: jsonBody(PersonPatch) },
    responses: {
      200: jsonContent(z.object({ person: PersonDetail, receipt: ReceiptRef.nullable() }).openapi('PersonChange'), 'The person after the change (receipt null: nothing changed)'),
      404: problemContent("No such person (another tenant's person answers the same)"),
      409: problemContent('last_owner: the change would leave the tenant without an active owner'),
    },
  });
  router.openapi(patchPerson, async (c) => {
    const { person_id: id } = c.req.valid('param');
    const body = c.req.valid('json');
    const a = actor(c);
    const target = id.startsWith('per_') ? await account.getPrincipal(a.tenantId, id) : undefined;
    if (!target) throw ProblemError.notFound('no such person in this tenant');
    const me = await actorRecord(a);
    const actorIsOwner = me?.role === 'owner';
    if ((body.role !== undefined && body.role !== target.role) || (target.role === 'owner' && (body.status !== undefined || body.capabilities !== undefined || body.role !== undefined))) {
      if (!actorIsOwner) {
        throw new ProblemError({ status: 403, code: 'capability_missing', detail: "only an owner changes a role or an owner's access", extra: { capability: 'people:manage' } });
      }
    }
    const change: PrincipalChange = {
      ...(body.capabilities !== undefined ? { capabilities: sortedCapabilities(body.capabilities) } : {}),
      ...(body.status !== undefined ? { status: body.status } : {}),
      ...(body.role !== undefined ? { role: body.role } : {}),
      ...(body.display_name !== undefined ? { displayName: body.display_name } : {}),
    };
    if (change.capabilities) checkGrant(a, target.granted, change.capabilities, '/capabilities');
    const afterRole = change.role ?? target.role;
    const after = effectiveCapabilities(afterRole, change.capabilities ?? target.granted, null);
    const statusChanged = change.status !== undefined && change.status !== target.status;
    const changed =
      statusChanged ||
      (change.role !== undefined && change.role !== target.role) ||
      (change.capabilities !== undefined && after.join() !== target.capabilities.join()) ||
      (change.displayName !== undefined && change.displayName !== target.displayName);
    if (!changed) return c.json({ person: personBody(target), receipt: null }, 200);
    const action: AdminAction = statusChanged ? (change.status === 'deactivated' ? 'person.deactivated' : 'person.reactivated') : 'person.changed';
    const { actionKey, result } = await seal(a, { action, subjectId: id, subjectKind: 'person', before: target.capabilities, after }, async (tx, at) => {
      const outcome = await tx.account.changePrincipal(a.tenantId, id, change, at);
      if (outcome === 'not_found') throw ProblemError.notFound('no such person in this tenant');
      if (outcome === 'last_owner') {
        throw ProblemError.conflict('last_owner', 'this is the last active owner of the tenant: make another person owner first', { reason: 'last_owner' });
      }
      return (await tx.account.getPrincipal(a.tenantId, id))!;
    });
    return c.json({ person: personBody(result), receipt: { action_key: actionKey } }, 200);
  });

  // ---- service accounts ----

  const createServiceAccount = defineRoute({
    method: 'post',
    path: '/account/service-accounts',
    operationId: 'createServiceAccount',
    tags,
    auth,
    summary: 'Add a named service account for automation and integrations (people:manage); sealed as an admin receipt',
    request: { body: jsonBody(NewServiceAccountRequest) },
    responses: { 201: jsonContent(z.object({ service_account: ServiceAccount, receipt: ReceiptRef }).openapi('NewServiceAccount'), 'The service account; mint its keys with POST /account/api-keys') },
  });
  router.openapi(createServiceAccount, async (c) => {
    const body = c.req.valid('json');
    const a = actor(c);
    const capabilities = sortedCapabilities([...DEFAULT_CAPABILITIES, ...(body.capabilities ?? [])]);
    checkGrant(a, DEFAULT_CAPABILITIES, capabilities, '/capabilities');
    const id = deps.ids.next('sva');
    const { actionKey, result } = await seal(a, { action: 'service_account.created', subjectId: id, subjectKind: 'service_account', before: null, after: capabilities }, async (tx, at) => {
      await tx.account.createServiceAccount({ id, tenantId: a.tenantId, name: body.name, capabilities, createdAt: at });
      return (await tx.account.getPrincipal(a.tenantId, id))!;
    });
    return c.json({ service_account: serviceAccountBody(result), receipt: { action_key: actionKey } }, 201);
  });

  const listServiceAccounts = defineRoute({
    method: 'get',
    path: '/account/service-accounts',
    operationId: 'listServiceAccounts',
    tags,
    auth,
    summary: "The tenant's service accounts (people:manage)",
    responses: { 200: jsonContent(z.object({ service_accounts: z.array(ServiceAccount) }).openapi('ServiceAccountList'), 'Oldest first') },
  });
  router.openapi(listServiceAccounts, async (c) => {
    const all = await account.listPrincipals(actor(c).tenantId);
    return c.json({ service_accounts: all.filter((p) => p.kind === 'service_account').map(serviceAccountBody) }, 200);
  });

  const patchServiceAccount = defineRoute({
    method: 'patch',
    path: '/account/service-accounts/{service_account_id}',
    operationId: 'updateServiceAccount',
    tags,
    auth,
    summary: "Change a service account's capabilities or name, or deactivate / reactivate it (people:manage); sealed as an admin receipt",
    request: { params: ServiceAccountIdParam, body: jsonBody(ServiceAccountPatch) },
    responses: {
      200: jsonContent(z.object({ service_account: ServiceAccount, receipt: ReceiptRef.nullable() }).openapi('ServiceAccountChange'), 'After the change (receipt null: nothing changed)'),
      404: problemContent('No such service account'),
    },
  });
  router.openapi(patchServiceAccount, async (c) => {
    const { service_account_id: id } = c.req.valid('param');
    const body = c.req.valid('json');
    const a = actor(c);
    const target = id.startsWith('sva_') ? await account.getPrincipal(a.tenantId, id) : undefined;
    if (!target) throw ProblemError.notFound('no such service account in this tenant');
    const change: PrincipalChange = {
      ...(body.capabilities !== undefined ? { capabilities: sortedCapabilities(body.capabilities) } : {}),
      ...(body.status !== undefined ? { status: body.status } : {}),
      ...(body.name !== undefined ? { displayName: body.name } : {}),
    };
    if (change.capabilities) checkGrant(a, target.granted, change.capabilities, '/capabilities');
    const after = change.capabilities ?? target.capabilities;
    const statusChanged = change.status !== undefined && change.status !== target.status;
    const changed = statusChanged || after.join() !== target.capabilities.join() || (change.displayName !== undefined && change.displayName !== target.displayName);
    if (!changed) return c.json({ service_account: serviceAccountBody(target), receipt: null }, 200);
    const action: AdminAction = statusChanged ? (change.status === 'deactivated' ? 'service_account.deactivated' : 'service_account.reactivated') : 'service_account.changed';
    const { actionKey, result } = await seal(a, { action, subjectId: id, subjectKind: 'service_account', before: target.capabilities, after }, async (tx, at) => {
      if ((await tx.account.changePrincipal(a.tenantId, id, change, at)) !== 'updated') throw ProblemError.notFound('no such service account in this tenant');
      return (await tx.account.getPrincipal(a.tenantId, id))!;
    });
    return c.json({ service_account: serviceAccountBody(result), receipt: { action_key: actionKey } }, 200);
  });

  // ---- keys ----

  /** The principal a key may be minted for by this actor, and what that key may carry. */
  const keyTarget = async (a: AuthenticatedContext, principalId: string | undefined): Promise<PrincipalRecord> => {
    const id = principalId ?? a.principal.id;
    if (id !== a.principal.id && !id.startsWith('sva_')) {
      throw ProblemError.validation([{ in: 'body', path: '/principal_id', message: 'a key is minted for yourself or for a service account, never for another person', code: 'principal_not_keyable' }]);
    }
    const target = await account.getPrincipal(a.tenantId, id);
    if (!target) throw ProblemError.validation([{ in: 'body', path: '/principal_id', message: 'no such service account in this tenant', code: 'principal_unknown' }]);
    if (target.status !== 'active') throw ProblemError.conflict('principal_deactivated', 'this principal is deactivated; reactivate it first');
    return target;
  };

  /** The key's capabilities: within its principal's, never beyond the actor's. */
  const checkKeyCapabilities = (a: AuthenticatedContext, target: PrincipalRecord, subset: readonly Capability[] | null, field: string) => {
    if (subset !== null) {
      const errors: FieldError[] = [];
      subset.forEach((cap, i) => {
        if (!target.capabilities.includes(cap)) errors.push({ in: 'body', path: `${field}/${i}`, message: `the principal does not hold ${cap}`, code: 'capability_exceeds_principal' });
      });
      if (errors.length > 0) throw ProblemError.validation(errors);
    }
    const carried = effectiveCapabilities(target.role, target.granted, subset);
    const missing = carried.filter((cap) => !a.principal.capabilities.includes(cap));
    if (missing.length > 0) throw notHeld(missing, field, (cap) => (subset ? subset.indexOf(cap as Capability) : undefined));
  };

  const futureInstant = (value: string | undefined, field: string): string | null => {
    if (value === undefined) return null;
    const at = new Date(value);
    if (at.getTime() <= deps.clock.now().getTime()) throw ProblemError.validation([{ in: 'body', path: field, message: 'must be in the future', code: 'too_small' }]);
    return rfc3339(at);
  };

  const createKey = defineRoute({
    method: 'post',
    path: '/account/api-keys',
    operationId: 'createApiKey',
    tags,
    auth,
    summary: 'Mint an API key for yourself or a service account, optionally narrower and expiring (people:manage); the secret is shown once',
    request: { body: jsonBody(NewKeyRequest) },
    responses: {
      201: jsonContent(NewKeyResponse, 'The key, shown only in this response'),
      409: problemContent('principal_deactivated'),
    },
  });
  router.openapi(createKey, async (c) => {
    const body = c.req.valid('json');
    const a = actor(c);
    const target = await keyTarget(a, body.principal_id);
    const subset = body.capabilities === undefined ? null : sortedCapabilities(body.capabilities);
    checkKeyCapabilities(a, target, body.capabilities ?? null, '/capabilities');
    const expiresAt = futureInstant(body.expires_at, '/expires_at');
    const apiKey = generateApiKey(a.tenantKind);
    const keyId = deps.ids.next('key');
    const carried = effectiveCapabilities(target.role, target.granted, subset);
    const { actionKey, result } = await seal(a, { action: 'key.created', subjectId: keyId, subjectKind: 'key', before: null, after: carried, related: { principal_id: target.id } }, async (tx, at) => {
      await tx.account.addKey({
        id: keyId,
        tenantId: a.tenantId,
        keyHash: apiKey.hash,
        prefix: apiKey.prefix,
        lastFour: apiKey.lastFour,
        createdAt: at,
        ...(target.kind === 'person' ? { personId: target.id } : { serviceAccountId: target.id }),
        label: body.label ?? null,
        capabilities: subset,
        expiresAt,
      });
      return (await tx.account.getKeyDetail(a.tenantId, keyId))!;
    });
    c.header('cache-control', 'no-store');
    return c.json({ api_key: apiKey.key, key: keyBody(result, new Map([[target.id, target]]), now()), receipt: { action_key: actionKey } }, 201);
  });

  const listKeys = defineRoute({
    method: 'get',
    path: '/account/api-keys',
    operationId: 'listAccountApiKeys',
    tags,
    auth,
    summary: "Every key of the tenant with its principal, label, capabilities, expiry and last use; never a secret (people:manage)",
    responses: { 200: jsonContent(z.object({ keys: z.array(ApiKeyInfo) }).openapi('AccountApiKeyList'), 'Oldest first') },
  });
  router.openapi(listKeys, async (c) => {
    const a = actor(c);
    const principals = await principalsOf(a.tenantId);
    const at = now();
    return c.json({ keys: (await account.listKeyDetails(a.tenantId)).map((k) => keyBody(k, principals, at)) }, 200);
  });

  const rotateKey = defineRoute({
    method: 'post',
    path: '/account/api-keys/{key_id}/rotate',
    operationId: 'createApiKeyRotation',
    tags,
    auth,
    summary: 'Replace a key of yours or of a service account with a new one; the old one keeps working for overlap_seconds (people:manage)',
    request: { params: KeyIdParam, body: jsonBody(RotateRequest) },
    responses: {
      201: jsonContent(RotateResponse, 'The new key, shown only in this response, and the old one as it now is'),
      404: problemContent('No such key'),
      409: problemContent('key_not_active: the key is revoked or expired; principal_deactivated'),
    },
  });
  router.openapi(rotateKey, async (c) => {
    const { key_id: oldId } = c.req.valid('param');
    const body = c.req.valid('json');
    const a = actor(c);
    const old = await account.getKeyDetail(a.tenantId, oldId);
    if (!old) throw ProblemError.notFound('no such key in this tenant');
    if (keyStatus(old, now()) !== 'active') throw ProblemError.conflict('key_not_active', 'this key is revoked or expired; create a new one instead');
    // Rotating hands the caller a new secret acting as the key's principal: the same rule as minting.
    if (old.principalId !== a.principal.id && !old.principalId.startsWith('sva_')) {
      throw new ProblemError({ status: 403, code: 'capability_not_held', detail: "another person's key is rotated by that person; you can revoke it", extra: { capabilities: [] } });
    }
    const target = await keyTarget(a, old.principalId);
    checkKeyCapabilities(a, target, old.capabilities as Capability[] | null, '');
    const expiresAt = body.expires_at === undefined ? old.expiresAt : futureInstant(body.expires_at, '/expires_at');
    const overlap = body.overlap_seconds ?? 0;
    const oldEnds = overlap === 0 ? null : rfc3339(new Date(deps.clock.now().getTime() + overlap * 1000));
    const apiKey = generateApiKey(a.tenantKind);
    const keyId = deps.ids.next('key');
    const carried = effectiveCapabilities(target.role, target.granted, old.capabilities);
    const { actionKey, result } = await seal(
      a,
      { action: 'key.rotated', subjectId: oldId, subjectKind: 'key', before: carried, after: carried, related: { new_key_id: keyId, principal_id: target.id, ...(oldEnds ? { old_key_expires_at: oldEnds } : {}) } },
      async (tx, at) => {
        const next: NewApiKeyRow = {
          id: keyId,
          tenantId: a.tenantId,
          keyHash: apiKey.hash,
          prefix: apiKey.prefix,
          lastFour: apiKey.lastFour,
          createdAt: at,
          ...(target.kind === 'person' ? { personId: target.id } : { serviceAccountId: target.id }),
          label: old.label,
          capabilities: old.capabilities,
          expiresAt,
        };
        if ((await tx.account.rotateKey(a.tenantId, oldId, next, oldEnds, at)) !== 'rotated') {
          throw ProblemError.conflict('key_not_active', 'this key is revoked or expired; create a new one instead');
        }
        return { next: (await tx.account.getKeyDetail(a.tenantId, keyId))!, previous: (await tx.account.getKeyDetail(a.tenantId, oldId))! };
      },
    );
    const principals = new Map([[target.id, target]]);
    c.header('cache-control', 'no-store');
    const at = now();
    return c.json({ api_key: apiKey.key, key: keyBody(result.next, principals, at), previous_key: keyBody(result.previous, principals, at), receipt: { action_key: actionKey } }, 201);
  });

  const revokeKey = defineRoute({
    method: 'post',
    path: '/account/api-keys/{key_id}/revoke',
    operationId: 'submitApiKeyRevocation',
    tags,
    auth,
    summary: "Revoke any of the tenant's keys: the next request with it is refused, in every process (people:manage)",
    request: { params: KeyIdParam },
    responses: {
      200: jsonContent(z.object({ key: ApiKeyInfo, receipt: ReceiptRef }).openapi('ApiKeyRevocation'), 'The key as it now is'),
      404: problemContent('No such key'),
      409: problemContent('key_not_active: already revoked or expired'),
    },
  });
  router.openapi(revokeKey, async (c) => {
    const { key_id: id } = c.req.valid('param');
    const a = actor(c);
    const key = await account.getKeyDetail(a.tenantId, id);
    if (!key) throw ProblemError.notFound('no such key in this tenant');
    if (keyStatus(key, now()) !== 'active') throw ProblemError.conflict('key_not_active', 'this key is already revoked or expired');
    const principals = await principalsOf(a.tenantId);
    const p = principals.get(key.principalId);
    const carried = p ? effectiveCapabilities(p.role, p.granted, key.capabilities) : [];
    const { actionKey, result } = await seal(a, { action: 'key.revoked', subjectId: id, subjectKind: 'key', before: carried, after: null, related: { principal_id: key.principalId } }, async (tx, at) => {
      if (!(await tx.account.revokeKey(a.tenantId, id, at))) throw ProblemError.conflict('key_not_active', 'this key is already revoked or expired');
      return (await tx.account.getKeyDetail(a.tenantId, id))!;
    });
    return c.json({ key: keyBody(result, principals, now()), receipt: { action_key: actionKey } }, 200);
  });

  router.route('/', identityRoutes(deps));

  // ---- audit ----

  const audit = defineRoute({
    method: 'get',
    path: '/account/audit',
    operationId: 'listAdminReceipts',
    tags,
    auth,
    summary: 'Admin receipts: every change to people, service accounts and keys, newest first, each sealed and verifiable (people:manage)',
    request: { query: AuditQuery },
    responses: { 200: jsonContent(AuditPage, 'One page; pass next_before as before for the next') },
  });
  router.openapi(audit, async (c) => {
    const q = c.req.valid('query');
    const a = actor(c);
    const limit = q.limit ?? 50;
    const rows = await account.listAdminReceipts(a.tenantId, q.before ?? null, limit + 1);
    const page = rows.slice(0, limit);
    const receipts = [];
    for (const row of page) {
      const record = await deps.store.evidence.findRecord(a.tenantId, row.actionKey);
      // The row and its receipt commit in one transaction (admin-receipts.ts); one without the other is corruption.
      if (!record) throw new Error(`admin receipt ${row.actionKey} has no sealed record`);
      const v = viewRecord(record);
      receipts.push({
        action_key: row.actionKey,
        action: row.action as AdminAction,
        actor_id: row.actorId,
        subject_id: row.subjectId,
        created_at: row.createdAt,
        facts: v.details,
        href: v.fields.href,
        evidence_packet: v.packet,
        verify_request: v.verifyRequest,
      });
    }
    return c.json({ receipts, next_before: rows.length > limit ? page.at(-1)!.actionKey : null }, 200);
  });

  return router;
}
