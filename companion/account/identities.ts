/**
 * Linked identities: a person's user on a platform that posts signed review callbacks (a chat
 * app's Slack user, a ServiceNow sys_user). A callback is delegation by its route: the route's
 * signing secret vouches for the platform user it names, and that user decides as the person
 * it is linked to here, or not at all (companion/reviews/reviewer.ts). Each link and unlink is
 * an admin receipt (./admin-receipts.ts), sealed in the same transaction as the change.
 *
 *   POST   /account/people/{person_id}/identities                 link {provider, subject}
 *   GET    /account/people/{person_id}/identities                 list
 *   DELETE /account/people/{person_id}/identities/{identity_id}   unlink
 *
 * All behind people:manage. A link hands whoever controls that platform user the person's
 * review decisions, so, as for capability grants (./principal-routes.ts): the actor must hold
 * reviews:decide, and only an owner links or unlinks an owner's identities.
 */
import type { AuthenticatedContext } from '../core/auth.ts';
import { ProblemError } from '../core/errors.ts';
import { createRouter, defineRoute, jsonBody, jsonContent, problemContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { sealAdminChange } from './admin-receipts.ts';
import type { PrincipalRecord } from './principals.ts';
import type { IdentityRecord } from './store.ts';

/** `slack:<team_id>`, `servicenow:<instance>`: a platform name, a colon, the workspace or instance. */
export const PROVIDER_PATTERN = /^[a-z][a-z0-9-]{0,31}:[A-Za-z0-9._-]{1,100}$/;
/** A platform's user id: Slack U0123ABCD, a ServiceNow sys_id (32 hex), … */
export const SUBJECT_PATTERN = /^[A-Za-z0-9._:@-]{1,128}$/;

export const IdentityProvider = z
  .string()
  .max(133, { error: 'expected <platform>:<workspace>, e.g. slack:T0123ABCD or servicenow:acme', abort: true })
  .regex(PROVIDER_PATTERN, { error: 'expected <platform>:<workspace>, e.g. slack:T0123ABCD or servicenow:acme' })
  .openapi({ description: 'slack:<team_id> for a chat route, servicenow:<instance> for a workflow route', example: 'slack:T0123ABCD' });
export const IdentitySubject = z
  .string()
  .max(128, { error: "expected the platform's user id (letters, digits and . _ : @ -)", abort: true })
  .regex(SUBJECT_PATTERN, { error: "expected the platform's user id (letters, digits and . _ : @ -)" })
  .openapi({ description: "The platform's user id: Slack user.id, ServiceNow sys_user sys_id", example: 'U0123ABCD' });

const LinkRequest = z.strictObject({ provider: IdentityProvider, subject: IdentitySubject }).openapi('IdentityLinkRequest');

const Identity = z
  .object({
    id: z.string().openapi({ example: 'idn_01JD3Q8Z5V7N4M2K6H8G0F1E2D' }),
    person_id: z.string(),
    provider: z.string(),
    subject: z.string(),
    created_at: z.string(),
  })
  .openapi('LinkedIdentity');

const ReceiptRef = z.object({ action_key: z.string().openapi({ description: 'The sealed admin receipt of this change' }) });
const PersonParam = z.object({ person_id: z.string().min(1).max(64) });
const IdentityParam = z.object({ person_id: z.string().min(1).max(64), identity_id: z.string().min(1).max(64) });

function identityBody(i: IdentityRecord) {
  return { id: i.id, person_id: i.personId, provider: i.provider, subject: i.subject, created_at: i.createdAt };
}

export function identityRoutes(deps: RouteDeps) {
  const router = createRouter();
  const { account } = deps.store;
  const auth = deps.auth.keyOrSession('people:manage');
  const tags = ['account'];
  const actor = (c: { var: { auth: unknown } }) => c.var.auth as AuthenticatedContext;

  /** The tenant's person named by the path (404 otherwise, another tenant's included). */
  const personOf = async (a: AuthenticatedContext, id: string): Promise<PrincipalRecord> => {
    const person = id.startsWith('per_') ? await account.getPrincipal(a.tenantId, id) : undefined;
    if (!person) throw ProblemError.notFound('no such person in this tenant');
    return person;
  };

  /** A link decides reviews as the person: the actor must hold reviews:decide, and be an owner for an owner. */
  const mayLink = async (a: AuthenticatedContext, person: PrincipalRecord) => {
    if (!a.principal.capabilities.includes('reviews:decide')) {
      throw new ProblemError({ status: 403, code: 'capability_not_held', detail: 'a linked identity decides reviews: you do not hold reviews:decide, so you cannot link one', extra: { capabilities: ['reviews:decide'] } });
    }
    if (person.role === 'owner' && (await account.getPrincipal(a.tenantId, a.principal.id))?.role !== 'owner') {
      throw new ProblemError({ status: 403, code: 'capability_missing', detail: "only an owner changes an owner's linked identities", extra: { capability: 'people:manage' } });
    }
  };

  const link = defineRoute({
    method: 'post',
    path: '/account/people/{person_id}/identities',
    operationId: 'createLinkedIdentity',
    tags,
    auth,
    summary: "Link a platform user (Slack, ServiceNow) to a person, so signed review callbacks naming it decide as that person (people:manage); sealed as an admin receipt",
    description:
      'A chat or workflow callback names its platform user in platform_user {provider, subject}; the decision counts as the person linked here, and a callback ' +
      'naming an unlinked user seals nothing. One person per provider and subject in a tenant. The actor must hold reviews:decide; an owner\'s identities are linked by an owner.',
    request: { params: PersonParam, body: jsonBody(LinkRequest) },
    responses: {
      201: jsonContent(z.object({ identity: Identity, receipt: ReceiptRef }).openapi('LinkedIdentityCreated'), 'The link and its admin receipt'),
      404: problemContent("No such person (another tenant's person answers the same)"),
      409: problemContent('identity_taken: this provider and subject are already linked to a person of the tenant'),
    },
  });
  router.openapi(link, async (c) => {
    const { person_id: personId } = c.req.valid('param');
    const body = c.req.valid('json');
    const a = actor(c);
    const person = await personOf(a, personId);
    await mayLink(a, person);
    const id = deps.ids.next('idn');
    const { actionKey, result } = await sealAdminChange(
      { sealer: deps.sealer },
      a,
      { action: 'identity.linked', subjectId: person.id, subjectKind: 'person', before: person.capabilities, after: person.capabilities, related: { identity_id: id, provider: body.provider, subject: body.subject } },
      async (tx, at) => {
        const row: IdentityRecord = { id, tenantId: a.tenantId, personId: person.id, provider: body.provider, subject: body.subject, createdAt: at };
        if ((await tx.account.linkIdentity(row)) === 'taken') throw ProblemError.conflict('identity_taken', 'this platform user is already linked to a person of this tenant; unlink it first');
        return row;
      },
    );
    return c.json({ identity: identityBody(result), receipt: { action_key: actionKey } }, 201);
  });

  const list = defineRoute({
    method: 'get',
    path: '/account/people/{person_id}/identities',
    operationId: 'listLinkedIdentities',
    tags,
    auth,
    summary: "A person's linked platform users, oldest first (people:manage)",
    request: { params: PersonParam },
    responses: {
      200: jsonContent(z.object({ identities: z.array(Identity) }).openapi('LinkedIdentityList'), 'Oldest first'),
      404: problemContent("No such person (another tenant's person answers the same)"),
    },
  });
  router.openapi(list, async (c) => {
    const { person_id: personId } = c.req.valid('param');
    const a = actor(c);
    const person = await personOf(a, personId);
    return c.json({ identities: (await account.listIdentities(a.tenantId, person.id)).map(identityBody) }, 200);
  });

  const unlink = defineRoute({
    method: 'delete',
    path: '/account/people/{person_id}/identities/{identity_id}',
    operationId: 'submitLinkedIdentityRemoval',
    tags,
    auth,
    summary: 'Unlink a platform user from a person: its next callback seals nothing (people:manage); sealed as an admin receipt',
    request: { params: IdentityParam },
    responses: {
      200: jsonContent(z.object({ identity: Identity, receipt: ReceiptRef }).openapi('LinkedIdentityDeleted'), 'The identity as it was, and the admin receipt'),
      404: problemContent('No such person, or no such identity of that person'),
    },
  });
  router.openapi(unlink, async (c) => {
    const { person_id: personId, identity_id: identityId } = c.req.valid('param');
    const a = actor(c);
    const person = await personOf(a, personId);
    const identity = (await account.listIdentities(a.tenantId, person.id)).find((i) => i.id === identityId);
    if (!identity) throw ProblemError.notFound('no such identity of this person');
    await mayLink(a, person);
    const { actionKey } = await sealAdminChange(
      { sealer: deps.sealer },
      a,
      { action: 'identity.unlinked', subjectId: person.id, subjectKind: 'person', before: person.capabilities, after: person.capabilities, related: { identity_id: identity.id, provider: identity.provider, subject: identity.subject } },
      async (tx) => {
        if (!(await tx.account.unlinkIdentity(a.tenantId, person.id, identity.id))) throw ProblemError.notFound('no such identity of this person');
      },
    );
    return c.json({ identity: identityBody(identity), receipt: { action_key: actionKey } }, 200);
  });

  return router;
}
