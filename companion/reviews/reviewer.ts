/**
 * Who made a review decision: the reviewer is the authenticated principal.
 *
 * Through a credential (POST /v1/reviews, a key or a session), the principal behind it decides.
 * The spec's `reviewer` field (interface-spec "Review request") stays: absent, or naming the
 * principal itself (its id, or its email in any letter case), it is that principal. Naming
 * anyone else is delegation: only a principal holding reviews:delegate may assert that someone
 * else decided (an integration's service account; owners hold every capability), and the
 * receipt says so (asserted_by). Without it: 422 reviewer_not_authenticated_principal, nothing
 * sealed. A delegated reviewer naming one of the tenant's people (id or email) is that person,
 * who must be active and hold reviews:decide; any other name is an unmapped identity.
 *
 * Through a signed route callback (routing/callbacks/), the route's signing secret vouches for
 * the platform user the callback names (platform_user: Slack user.id on a chat route, a
 * ServiceNow sys_user on a workflow route), and the decision is that user's linked person
 * (account/identities.ts), or nothing is sealed.
 *
 * N-of-M rules count distinct people (./seal-review.ts): `countsAs` is the person an approval
 * counts as (null: an unmapped identity, or a service account as itself, neither a pair of
 * eyes), and `actingPerson` the person whose own credential made it, who may not add a second
 * approval to the same action by naming someone else.
 */
import type { AuthContext, PrincipalKind } from '../core/auth.ts';
import { ProblemError } from '../core/errors.ts';
import type { AccountStore } from '../account/store.ts';
import type { PrincipalRecord } from '../account/principals.ts';
import { emailDigest, normaliseEmail } from '../account/signup.ts';

/** A principal as receipts and answers name it. */
export interface NamedPrincipal {
  principal_id: string;
  kind: PrincipalKind;
  display_name: string;
}

/** What a signed callback asserts: its route and the platform user it names. */
export interface RouteAssertion {
  route: string;
  provider: string;
  subject: string;
}

export interface ReviewerAttribution {
  /** The spec's reviewer: the principal's id when it decides as itself, else the name as posted. */
  reviewer: string;
  /** Who the decision is attributed to: the principal itself or the mapped person; null when unmapped. */
  decidedBy: NamedPrincipal | null;
  /** Present when someone other than the decider named the reviewer (delegation, a callback). */
  assertedBy: NamedPrincipal | RouteAssertion | null;
  /** The credential's principal (null for a callback, which no credential authenticated). */
  credential: NamedPrincipal | null;
  /** The person an approval counts as under an N-of-M rule; null: counts toward a one-approval rule only. */
  countsAs: string | null;
  /** The person whose own credential made the decision, as themselves or naming someone else. */
  actingPerson: string | null;
}

/** Platform families a route channel's callbacks may name users of (account/identities.ts providers). */
const CHANNEL_PLATFORMS: Record<string, string | undefined> = { chat: 'slack', workflow: 'servicenow' };

const named = (p: { id: string; kind: PrincipalKind; displayName: string }): NamedPrincipal => ({ principal_id: p.id, kind: p.kind, display_name: p.displayName });

function mayDecide(p: PrincipalRecord): boolean {
  return p.status === 'active' && p.capabilities.includes('reviews:decide');
}

/** The reviewer of a decision posted with a credential (a key or a session). */
export async function attributeToCredential(account: AccountStore, auth: AuthContext, reviewer: string | undefined): Promise<ReviewerAttribution> {
  const principal = auth.principal;
  // Every credential middleware sets the principal; only the service itself and callbacks act without one.
  if (!principal) throw new Error('a review decision through a credential needs its principal');
  const self = named(principal);
  const person = principal.kind === 'person' ? principal.id : null;
  if (reviewer === undefined || (await namesPrincipal(account, auth.tenantId, principal.id, reviewer))) {
    return { reviewer: principal.id, decidedBy: self, assertedBy: null, credential: self, countsAs: person, actingPerson: person };
  }
  if (!principal.capabilities.includes('reviews:delegate')) throw notAuthenticatedPrincipal();
  const mapped = await personNamed(account, auth.tenantId, reviewer);
  if (mapped && !mayDecide(mapped)) throw reviewerNotAuthorised('/reviewer');
  return {
    reviewer,
    decidedBy: mapped ? named(mapped) : null,
    assertedBy: self,
    credential: self,
    countsAs: mapped?.id ?? null,
    actingPerson: person,
  };
}

/**
 * The reviewer of a decision a signed callback posted: the person linked to the platform user
 * it names. An unnamed or unlinked user, or a linked person who may not decide, seals nothing.
 */
export async function attributeToPlatformUser(
  account: AccountStore,
  route: { tenantId: string; channel: string; target: string },
  platformUser: { provider: string; subject: string } | undefined,
  reviewer: string,
): Promise<ReviewerAttribution> {
  const family = CHANNEL_PLATFORMS[route.channel];
  if (platformUser && family !== undefined && !platformUser.provider.startsWith(`${family}:`)) {
    throw ProblemError.validation([{ in: 'body', path: '/platform_user/provider', message: `a ${route.channel} route names ${family}:<…> users`, code: 'platform_mismatch' }]);
  }
  const link = platformUser && (await account.findIdentity(route.tenantId, platformUser.provider, platformUser.subject));
  const person = link ? await account.getPrincipal(route.tenantId, link.personId) : undefined;
  if (!platformUser || !person) throw platformUserNotLinked(route.channel, platformUser === undefined);
  if (!mayDecide(person)) throw reviewerNotAuthorised('/platform_user');
  return {
    reviewer,
    decidedBy: named(person),
    assertedBy: { route: `${route.channel}:${route.target}`, provider: platformUser.provider, subject: platformUser.subject },
    credential: null,
    countsAs: person.id,
    actingPerson: null,
  };
}

/** Whether `reviewer` names the principal: its id, or (a person) its email in any letter case. */
async function namesPrincipal(account: AccountStore, tenantId: string, principalId: string, reviewer: string): Promise<boolean> {
  if (reviewer === principalId) return true;
  if (!principalId.startsWith('per_') || !reviewer.includes('@')) return false;
  return (await account.findPersonIdByEmailDigest(tenantId, emailDigest(normaliseEmail(reviewer)))) === principalId;
}

/** The tenant's person a delegated reviewer names by id or email, if any. */
async function personNamed(account: AccountStore, tenantId: string, reviewer: string): Promise<PrincipalRecord | undefined> {
  const id = reviewer.startsWith('per_') ? reviewer : reviewer.includes('@') ? await account.findPersonIdByEmailDigest(tenantId, emailDigest(normaliseEmail(reviewer))) : undefined;
  return id === undefined ? undefined : account.getPrincipal(tenantId, id);
}

function notAuthenticatedPrincipal(): ProblemError {
  const message = 'names someone other than the principal behind this credential, which does not hold reviews:delegate: omit reviewer, or name yourself (your id or email)';
  return new ProblemError({
    status: 422,
    code: 'reviewer_not_authenticated_principal',
    detail: `reviewer ${message}`,
    errors: [{ in: 'body', path: '/reviewer', message, code: 'reviewer_not_authenticated_principal' }],
  });
}

function reviewerNotAuthorised(path: string): ProblemError {
  const message = 'names a person who cannot decide reviews (deactivated, or without reviews:decide)';
  return new ProblemError({ status: 422, code: 'reviewer_not_authorised', detail: `the reviewer ${message}`, errors: [{ in: 'body', path, message, code: 'reviewer_not_authorised' }] });
}

/**
 * 403: the route vouches for a platform user no person of the tenant is linked to. For a chat
 * route the answer carries `slack_response`, a view_submission answer (Slack "Handling
 * submissions": response_action errors, keyed by the modal's block_id) the app can return to
 * Slack as it is, so the user sees why in the modal.
 */
function platformUserNotLinked(channel: string, unnamed: boolean): ProblemError {
  const text = unnamed
    ? 'This decision names no platform user, so it cannot be attributed to a person. Nothing was recorded.'
    : 'Your account here is not linked to a person of this workspace’s Action Gate tenant, so your decision was not recorded. Ask an administrator to link it.';
  return new ProblemError({
    status: 403,
    code: 'platform_user_not_linked',
    detail: unnamed
      ? 'the callback names no platform_user: a route decides only as the person its platform user is linked to (POST /account/people/{person_id}/identities); nothing was sealed'
      : 'the platform_user is not linked to a person of this tenant who may decide (POST /account/people/{person_id}/identities); nothing was sealed',
    extra: channel === 'chat' ? { slack_response: { response_action: 'errors', errors: { reviewer: text } } } : { message: text },
  });
}
