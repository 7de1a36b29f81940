/**
 * The device authorization grant's endpoints (RFC 8628): the device asks for codes and polls the
 * token endpoint; a person signed in to the console looks the user code up, sees what is asked,
 * and approves or denies it (a session write, so with its CSRF token); the person lists and
 * revokes the keys the grant gave their devices.
 */
import type { Context } from 'hono';
import { sealAdminChange } from '../account/admin-receipts.ts';
import type { SessionContext } from '../account/people.ts';
import { effectiveCapabilities, generateApiKey } from '../core/auth.ts';
import type { AuthenticatedContext } from '../core/auth.ts';
import { rfc3339 } from '../core/clock.ts';
import { ProblemError } from '../core/errors.ts';
import { createRouter, defineRoute, jsonContent, problemContent, z } from '../core/router.ts';
import { recordBounds } from '../core/bounds.ts';
import { signupRateLimit } from '../core/rate-limit.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import {
  DEVICE_CLIENTS,
  DEVICE_CODE_GRANT_TYPE,
  DEVICE_CODE_TTL_SECONDS,
  DEVICE_POLL_INTERVAL_SECONDS,
  DEVICE_TOKEN_TTL_SECONDS,
  SLOW_DOWN_STEP_SECONDS,
  displayUserCode,
  grantable,
  hashDeviceCode,
  newDeviceCode,
  newUserCode,
  normaliseUserCode,
  parseScope,
} from './device-grant.ts';
import { oauthError, oauthErrorContent } from './oauth-errors.ts';
import type { DeviceAuthorizationRecord } from './store.ts';

const DEVICE_AUTHORIZATION_PATH = '/oauth/device_authorization';

const FormField = z.string().max(2048);
const FORM_MEMBERS_MAX = 16;
const FORM_NAME_MAX = 64;

const DeviceAuthorizationForm = z
  .looseObject({
    client_id: FormField.optional().openapi({ example: 'action-gate-extension' }),
    scope: FormField.optional().openapi({ description: 'Space-delimited capability names (RFC 6749 §3.3); absent: reviews:decide records:read', example: 'reviews:decide records:read' }),
  })
  // RFC 6749 §3.1: unknown parameters are ignored, so the form stays open, but bounded.
  .refine((form) => Object.keys(form).length <= FORM_MEMBERS_MAX && Object.keys(form).every((k) => k.length <= FORM_NAME_MAX), { error: `expected at most ${FORM_MEMBERS_MAX} parameters, each name at most ${FORM_NAME_MAX} characters` })
  .openapi('DeviceAuthorizationForm', recordBounds(FORM_MEMBERS_MAX, FORM_NAME_MAX));

const DeviceAuthorizationResponse = z
  .object({
    device_code: z.string(),
    user_code: z.string().openapi({ example: 'BCDF-GHJK' }),
    verification_uri: z.string(),
    verification_uri_complete: z.string(),
    expires_in: z.number().int(),
    interval: z.number().int(),
  })
  .openapi('DeviceAuthorizationResponse', { description: 'RFC 8628 §3.2' });

const TokenForm = z
  .looseObject({
    grant_type: FormField.optional().openapi({ example: DEVICE_CODE_GRANT_TYPE }),
    device_code: FormField.optional(),
    client_id: FormField.optional(),
  })
  // RFC 6749 §3.1: unknown parameters are ignored, so the form stays open, but bounded.
  .refine((form) => Object.keys(form).length <= FORM_MEMBERS_MAX && Object.keys(form).every((k) => k.length <= FORM_NAME_MAX), { error: `expected at most ${FORM_MEMBERS_MAX} parameters, each name at most ${FORM_NAME_MAX} characters` })
  .openapi('DeviceTokenForm', recordBounds(FORM_MEMBERS_MAX, FORM_NAME_MAX));

const TokenResponse = z
  .object({
    access_token: z.string().openapi({ description: 'A person-bound API key (svc_test_… or svc_live_…), narrowed to `scope`; send it as X-Service-Key or Bearer' }),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int(),
    scope: z.string(),
  })
  .openapi('DeviceTokenResponse', { description: 'RFC 6749 §5.1' });

const UserCodeParam = z.object({ user_code: z.string().max(32).openapi({ example: 'BCDF-GHJK' }) });

const DeviceAuthorizationView = z
  .object({
    user_code: z.string(),
    client_id: z.string(),
    client_name: z.string(),
    status: z.enum(['pending', 'approved', 'denied', 'issued']),
    requested: z.array(z.string()),
    grantable: z.array(z.string()).openapi({ description: 'What approving grants: the requested capabilities the signed-in person holds' }),
    expires_at: z.string(),
  })
  .openapi('DeviceAuthorizationView');

const DeviceToken = z
  .object({
    key_id: z.string(),
    client_id: z.string(),
    capabilities: z.array(z.string()),
    status: z.enum(['active', 'revoked', 'expired']),
    created_at: z.string(),
    expires_at: z.string().nullable(),
    last_used_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
  })
  .openapi('DeviceToken');

/** The approving person: a session opened by a service account's key has none. */
function personOf(s: SessionContext): { id: string } {
  if (s.person && s.principal.kind === 'person') return s.person;
  throw ProblemError.conflict('session_predates_people', 'a device is approved by a person; this session belongs to a service account key');
}

function clientName(clientId: string): string {
  return DEVICE_CLIENTS[clientId] ?? clientId;
}

export function deviceGrantRoutes(deps: RouteDeps) {
  const router = createRouter();
  const { signIn, account, tenants } = deps.store;
  const nowDate = () => deps.clock.now();
  const now = () => rfc3339(nowDate());
  const base = deps.config.publicBaseUrl.replace(/\/$/, '');
  // RFC 8628 §5.2: the verification page is the console, on the service's own public origin.
  const verificationUri = `${base}/console#/device`;

  // Unauthenticated and writes a row: the signup limiter's per-address and global buckets.
  router.use(DEVICE_AUTHORIZATION_PATH, signupRateLimit(deps.config, deps.clock));

  const authorize = defineRoute({
    method: 'post',
    path: DEVICE_AUTHORIZATION_PATH,
    operationId: 'createDeviceAuthorization',
    tags: ['account'],
    auth: 'public',
    summary: 'RFC 8628 §3.1: a device (the extension) asks for a device code and a user code for a person to approve in the console',
    request: { body: { required: true, content: { 'application/x-www-form-urlencoded': { schema: DeviceAuthorizationForm } } } },
    responses: {
      200: jsonContent(DeviceAuthorizationResponse, 'The codes; show user_code and open verification_uri_complete, then poll /oauth/token'),
      400: oauthErrorContent('invalid_request, invalid_client or invalid_scope (RFC 6749 §5.2)'),
      429: problemContent('rate_limited: too many requests from this address'),
    },
  });
  router.openapi(authorize, async (c) => {
    const form = c.req.valid('form') as Record<string, unknown>;
    const clientId = typeof form.client_id === 'string' ? form.client_id : undefined;
    if (clientId === undefined) return oauthError('invalid_request', 'client_id is required') as never;
    if (!Object.hasOwn(DEVICE_CLIENTS, clientId)) return oauthError('invalid_client', 'this client_id is not a client of this service') as never;
    const scope = parseScope(typeof form.scope === 'string' ? form.scope : undefined);
    if (!scope || scope.length === 0) return oauthError('invalid_scope', 'scope must be space-delimited capability names this service knows') as never;
    const at = nowDate();
    await signIn.purgeExpired(rfc3339(at));
    const device = newDeviceCode();
    let userCode = '';
    for (let attempt = 0; ; attempt++) {
      userCode = newUserCode();
      const created = await signIn.createDeviceAuthorization({
        id: deps.ids.next('dev'),
        deviceCodeHash: device.hash,
        userCode,
        clientId,
        scope,
        status: 'pending',
        tenantId: null,
        personId: null,
        grantedScope: null,
        keyId: null,
        pollInterval: DEVICE_POLL_INTERVAL_SECONDS,
        lastPolledAt: null,
        createdAt: rfc3339(at),
        expiresAt: rfc3339(new Date(at.getTime() + DEVICE_CODE_TTL_SECONDS * 1000)),
        decidedAt: null,
      });
      if (created === 'created') break;
      // 20^8 codes: a second collision in a row means something else is wrong.
      if (attempt >= 4) throw new Error('no free user code after 5 attempts');
    }
    const shown = displayUserCode(userCode);
    c.header('cache-control', 'no-store');
    return c.json(
      {
        device_code: device.code,
        user_code: shown,
        verification_uri: verificationUri,
        verification_uri_complete: `${verificationUri}?user_code=${shown}`,
        expires_in: DEVICE_CODE_TTL_SECONDS,
        interval: DEVICE_POLL_INTERVAL_SECONDS,
      },
      200,
    );
  });

  const token = defineRoute({
    method: 'post',
    path: '/oauth/token',
    operationId: 'createOAuthToken',
    tags: ['account'],
    auth: 'public',
    summary: 'RFC 8628 §3.4: the device polls with its device code; once a person approved, the answer is a person-bound key narrowed to the granted capabilities',
    request: { body: { required: true, content: { 'application/x-www-form-urlencoded': { schema: TokenForm } } } },
    responses: {
      200: jsonContent(TokenResponse, 'The access token, issued once'),
      400: oauthErrorContent('authorization_pending, slow_down, access_denied, expired_token (RFC 8628 §3.5), invalid_grant, invalid_request, invalid_client or unsupported_grant_type (RFC 6749 §5.2)'),
    },
  });
  router.openapi(token, async (c) => {
    const form = c.req.valid('form') as Record<string, unknown>;
    const field = (name: string) => (typeof form[name] === 'string' ? (form[name] as string) : undefined);
    const grantType = field('grant_type');
    if (grantType === undefined) return oauthError('invalid_request', 'grant_type is required') as never;
    if (grantType !== DEVICE_CODE_GRANT_TYPE) return oauthError('unsupported_grant_type', `this endpoint issues tokens for ${DEVICE_CODE_GRANT_TYPE} only`) as never;
    const deviceCode = field('device_code');
    const clientId = field('client_id');
    if (deviceCode === undefined || clientId === undefined) return oauthError('invalid_request', 'device_code and client_id are required') as never;
    if (!Object.hasOwn(DEVICE_CLIENTS, clientId)) return oauthError('invalid_client', 'this client_id is not a client of this service') as never;
    const dev = await signIn.deviceByCode(hashDeviceCode(deviceCode));
    // RFC 6749 §5.2 invalid_grant: unknown, or issued to another client.
    if (!dev || dev.clientId !== clientId) return oauthError('invalid_grant', 'the device code is not valid') as never;
    if (dev.status === 'issued') return oauthError('invalid_grant', 'the token for this device code was already issued') as never;
    const at = nowDate();
    if (rfc3339(at) >= dev.expiresAt) return oauthError('expired_token', 'the device code has expired; start again') as never;
    // RFC 8628 §3.5: polling faster than the interval is answered slow_down, and the interval grows.
    if (dev.lastPolledAt !== null && at.getTime() - Date.parse(dev.lastPolledAt) < dev.pollInterval * 1000) {
      await signIn.recordPoll(dev.id, rfc3339(at), dev.pollInterval + SLOW_DOWN_STEP_SECONDS);
      return oauthError('slow_down', `poll at most once every ${dev.pollInterval + SLOW_DOWN_STEP_SECONDS} seconds`) as never;
    }
    await signIn.recordPoll(dev.id, rfc3339(at), dev.pollInterval);
    if (dev.status === 'pending') return oauthError('authorization_pending', 'the person has not approved this request yet') as never;
    if (dev.status === 'denied') return oauthError('access_denied', 'the person denied this request') as never;
    return (await issueToken(c, dev)) as never;
  });

  /** The approved request's key, minted once and sealed as an admin receipt in the same transaction. */
  async function issueToken(c: Context, dev: DeviceAuthorizationRecord): Promise<Response> {
    const tenant = dev.tenantId === null ? undefined : await tenants.getTenant(dev.tenantId);
    const person = tenant && dev.personId !== null ? await account.getPrincipal(tenant.id, dev.personId) : undefined;
    // Deactivated since approving: nothing is issued (RFC 8628 §3.5 access_denied).
    if (!tenant || !person || person.status !== 'active') return oauthError('access_denied', 'the person who approved this request can no longer sign in');
    const subset = dev.grantedScope ?? [];
    const carried = effectiveCapabilities(person.role, person.granted, subset);
    if (carried.length === 0) return oauthError('access_denied', 'the person who approved this request no longer holds any of the requested capabilities');
    const apiKey = generateApiKey(tenant.kind);
    const keyId = deps.ids.next('key');
    const expiresAt = rfc3339(new Date(nowDate().getTime() + DEVICE_TOKEN_TTL_SECONDS * 1000));
    // The receipt's actor is the approving person; its credential is the device authorization.
    const auth: AuthenticatedContext = {
      tenantId: tenant.id,
      tenantKind: tenant.kind,
      keyId: person.id,
      personId: person.id,
      principal: { id: person.id, kind: 'person', displayName: person.displayName, capabilities: effectiveCapabilities(person.role, person.granted, null) },
      credentialId: dev.id,
    };
    class AlreadyIssued extends Error {}
    try {
      await sealAdminChange(
        { sealer: deps.sealer },
        auth,
        { action: 'key.created', subjectId: keyId, subjectKind: 'key', before: null, after: carried, related: { principal_id: person.id, device_authorization_id: dev.id } },
        async (tx, createdAt) => {
          await tx.account.addKey({
            id: keyId,
            tenantId: tenant.id,
            keyHash: apiKey.hash,
            prefix: apiKey.prefix,
            lastFour: apiKey.lastFour,
            createdAt,
            personId: person.id,
            label: `Device sign-in: ${clientName(dev.clientId)}`,
            capabilities: subset,
            expiresAt,
          });
          // Decided by this conditional update: of two polls racing, one issues and the other rolls back.
          if (!(await tx.signIn.markIssued(dev.id, keyId))) throw new AlreadyIssued();
        },
      );
    } catch (err) {
      if (err instanceof AlreadyIssued) return oauthError('invalid_grant', 'the token for this device code was already issued');
      throw err;
    }
    c.header('cache-control', 'no-store');
    c.header('pragma', 'no-cache');
    return c.json({ access_token: apiKey.key, token_type: 'Bearer' as const, expires_in: DEVICE_TOKEN_TTL_SECONDS, scope: carried.join(' ') }, 200);
  }

  const session = deps.auth.session;

  /** The request behind a typed user code, pending or decided, unexpired; 404 otherwise. */
  const lookUp = async (typed: string) => {
    const code = normaliseUserCode(typed);
    const dev = code === undefined ? undefined : await signIn.deviceByUserCode(code);
    if (!dev || now() >= dev.expiresAt) throw ProblemError.notFound('no such user code, or it has expired');
    return dev;
  };

  const view = (dev: DeviceAuthorizationRecord, s: SessionContext) => ({
    user_code: displayUserCode(dev.userCode),
    client_id: dev.clientId,
    client_name: clientName(dev.clientId),
    status: dev.status,
    requested: dev.scope,
    grantable: grantable(dev.scope, s.capabilities),
    expires_at: dev.expiresAt,
  });

  const getDevice = defineRoute({
    method: 'get',
    path: '/account/device-authorizations/{user_code}',
    operationId: 'getDeviceAuthorization',
    tags: ['account'],
    auth: session,
    summary: 'RFC 8628 §3.3: the request behind a user code, what it asks for and what approving it would grant the signed-in person’s device',
    request: { params: UserCodeParam },
    responses: {
      200: jsonContent(DeviceAuthorizationView, 'The request'),
      404: problemContent('No such user code, or it has expired'),
    },
  });
  router.openapi(getDevice, async (c) => {
    const s = c.var.session;
    personOf(s);
    return c.json(view(await lookUp(c.req.valid('param').user_code), s), 200);
  });

  const decideRoute = (decision: 'approve' | 'deny') =>
    defineRoute({
      method: 'post',
      path: `/account/device-authorizations/{user_code}/${decision}`,
      operationId: decision === 'approve' ? 'submitDeviceApproval' : 'submitDeviceDenial',
      tags: ['account'],
      auth: session,
      summary:
        decision === 'approve'
          ? 'Approve the device request as the signed-in person: the device’s next poll receives a key acting for this person with the grantable capabilities'
          : 'Deny the device request: its next poll is answered access_denied',
      request: { params: UserCodeParam },
      responses: {
        200: jsonContent(DeviceAuthorizationView, 'The request as it now is'),
        404: problemContent('No such user code, or it has expired'),
        409: problemContent('device_authorization_not_pending: already approved or denied; session_predates_people'),
      },
    });
  for (const decision of ['approve', 'deny'] as const) {
    router.openapi(decideRoute(decision), async (c) => {
      const s = c.var.session;
      const person = personOf(s);
      const dev = await lookUp(c.req.valid('param').user_code);
      const granted = grantable(dev.scope, s.capabilities);
      if (decision === 'approve' && granted.length === 0) {
        throw new ProblemError({ status: 403, code: 'capability_missing', detail: 'you hold none of the capabilities this device asks for', extra: { capability: dev.scope[0] } });
      }
      const at = now();
      const decided = await signIn.decideDevice(
        dev.id,
        { status: decision === 'approve' ? 'approved' : 'denied', tenantId: s.tenantId, personId: person.id, grantedScope: decision === 'approve' ? granted : null, at },
        at,
      );
      if (!decided) throw ProblemError.conflict('device_authorization_not_pending', 'this request was already approved or denied');
      return c.json(view((await signIn.deviceByUserCode(dev.userCode))!, s), 200);
    });
  }

  const tokenStatus = (t: { status: 'active' | 'revoked'; expiresAt: string | null }): 'active' | 'revoked' | 'expired' =>
    t.status === 'revoked' ? 'revoked' : t.expiresAt !== null && t.expiresAt <= now() ? 'expired' : 'active';

  const listTokens = defineRoute({
    method: 'get',
    path: '/account/device-tokens',
    operationId: 'listDeviceTokens',
    tags: ['account'],
    auth: session,
    summary: 'The keys the device grant issued to the signed-in person’s devices, newest first (people:manage also sees them in GET /account/api-keys)',
    responses: { 200: jsonContent(z.object({ tokens: z.array(DeviceToken) }).openapi('DeviceTokenList'), 'Newest first') },
  });
  router.openapi(listTokens, async (c) => {
    const s = c.var.session;
    const person = personOf(s);
    const tokens = await signIn.listDeviceTokens(s.tenantId, person.id);
    return c.json(
      {
        tokens: tokens.map((t) => ({
          key_id: t.keyId,
          client_id: t.clientId,
          capabilities: t.capabilities,
          status: tokenStatus(t),
          created_at: t.createdAt,
          expires_at: t.expiresAt,
          last_used_at: t.lastUsedAt,
          revoked_at: t.revokedAt,
        })),
      },
      200,
    );
  });

  const revokeToken = defineRoute({
    method: 'post',
    path: '/account/device-tokens/{key_id}/revoke',
    operationId: 'submitDeviceTokenRevocation',
    tags: ['account'],
    auth: session,
    summary: 'Revoke one of your devices’ keys: its next request is refused, in every process; sealed as an admin receipt',
    request: { params: z.object({ key_id: z.string().max(64) }) },
    responses: {
      200: jsonContent(z.object({ key_id: z.string(), status: z.literal('revoked'), receipt: z.object({ action_key: z.string() }) }).openapi('DeviceTokenRevocation'), 'Revoked'),
      404: problemContent('No such key among your devices’ keys'),
      409: problemContent('key_not_active: already revoked or expired'),
    },
  });
  router.openapi(revokeToken, async (c) => {
    const s = c.var.session;
    const person = personOf(s);
    const { key_id: keyId } = c.req.valid('param');
    const mine = (await signIn.listDeviceTokens(s.tenantId, person.id)).find((t) => t.keyId === keyId);
    if (!mine) throw ProblemError.notFound('no such key among your devices’ keys');
    if (tokenStatus(mine) !== 'active') throw ProblemError.conflict('key_not_active', 'this key is already revoked or expired');
    const auth: AuthenticatedContext = {
      tenantId: s.tenantId,
      tenantKind: s.tenantKind,
      keyId: person.id,
      personId: person.id,
      principal: s.principal,
      credentialId: s.sessionId,
    };
    const { actionKey } = await sealAdminChange(
      { sealer: deps.sealer },
      auth,
      { action: 'key.revoked', subjectId: keyId, subjectKind: 'key', before: mine.capabilities, after: null, related: { principal_id: person.id } },
      async (tx, at) => {
        if (!(await tx.account.revokeKey(s.tenantId, keyId, at))) throw ProblemError.conflict('key_not_active', 'this key is already revoked or expired');
      },
    );
    return c.json({ key_id: keyId, status: 'revoked' as const, receipt: { action_key: actionKey } }, 200);
  });

  return router;
}
