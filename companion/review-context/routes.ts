/**
 * Review context over HTTP (./context.ts says who may do what):
 *
 *   GET    /v1/reviews/{action_key}/context-recipients   the submitter: whom to seal to
 *   POST   /v1/reviews/{action_key}/context              the submitter: one ciphertext per recipient key
 *   DELETE /v1/reviews/{action_key}/context              the submitter withdraws what it shared
 *   GET    /v1/reviews/{action_key}/context?key_id=…     a person with reviews:decide: their own ciphertext
 *
 * Plus the reviewer's device keys (./key-routes.ts). The service handles only ciphertexts
 * (RFC 9180 §6.1 enc and ct) and never a key that opens them; it never logs, exports, delivers
 * or dispatches them (this capability is the only reader of its tables), and answers each
 * reviewer only the ciphertext sealed to the device key they name, which must be their own.
 */
import { fromBase64Url, toBase64Url } from '../../shared/encoding.ts';
import { rfc3339 } from '../core/clock.ts';
import { ProblemError } from '../core/errors.ts';
import type { FieldError } from '../core/errors.ts';
import { createRouter, defineRoute, jsonBody, jsonContent, problemContent } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { assertOpen, assertSubmitter, contextStatus, findPaused, policyMode, recipientKeys } from './context.ts';
import { requirePerson, reviewKeyRoutes } from './key-routes.ts';
import {
  ActionKeyParam,
  CIPHERTEXT_MAX_BYTES,
  CONTEXT_TOTAL_MAX_BYTES,
  ContextCiphertext,
  ContextQuery,
  ContextStored,
  ContextUpload,
  ContextWithdrawn,
  RECIPIENTS_MAX,
  Recipients,
  SUITE,
} from './schema.ts';
import type { ContextRow } from './store.ts';

const LIMITS = { ciphertext_max_bytes: CIPHERTEXT_MAX_BYTES, total_max_bytes: CONTEXT_TOTAL_MAX_BYTES, recipients_max: RECIPIENTS_MAX };

function tooLarge(detail: string): ProblemError {
  return new ProblemError({ status: 413, code: 'review_context_too_large', detail, extra: { limits: LIMITS } });
}

export function reviewContextRoutes(deps: RouteDeps) {
  const router = createRouter();
  const now = () => rfc3339(deps.clock.now());
  const contexts = deps.store.reviewContexts;

  const recipients = defineRoute({
    method: 'get',
    path: '/v1/reviews/{action_key}/context-recipients',
    operationId: 'listReviewContextRecipients',
    tags: ['reviews'],
    auth: deps.auth.keyOrSession('gate:submit'),
    summary: 'For the submitter of a paused action: the device keys to seal its review context to, and the policy that says whether to',
    description:
      'Every active device key of every active person who may decide the action (reviews:decide). review_context off (the default policy): recipients is empty and nothing is to be posted. ' +
      'Seal the exact gate request body with shared/hpke.ts to each key, bound to action_key and payload_hash.',
    request: { params: ActionKeyParam },
    responses: {
      200: jsonContent(Recipients, 'The recipients'),
      404: problemContent('No paused action with this action_key for this tenant'),
      409: problemContent('review_not_pending: the review already ended'),
    },
  });
  router.openapi(recipients, async (c) => {
    const auth = c.var.auth;
    const { item, record } = await findPaused(deps, auth.tenantId, c.req.valid('param').action_key);
    await assertSubmitter(deps, auth, item);
    assertOpen(deps, item);
    const mode = await policyMode(deps, item);
    const keys = mode === 'encrypted' ? (await recipientKeys(deps, auth.tenantId)).slice(0, RECIPIENTS_MAX) : [];
    const held = (await contexts.countContexts(auth.tenantId, [item.actionKey])).get(item.actionKey) ?? 0;
    return c.json(
      {
        action_key: item.actionKey,
        payload_hash: record.payloadHash,
        review_context: mode,
        status: contextStatus(item, now(), held),
        suite: SUITE,
        limits: LIMITS,
        recipients: keys.map((k) => ({ key_id: k.id, person_id: k.personId, public_key: toBase64Url(k.publicKey) })),
      },
      200,
    );
  });

  const upload = defineRoute({
    method: 'post',
    path: '/v1/reviews/{action_key}/context',
    operationId: 'createReviewContext',
    tags: ['reviews'],
    auth: deps.auth.keyOrSession('gate:submit'),
    summary: 'For the submitter of a paused action: store its review context, one HPKE ciphertext per recipient device key',
    description:
      'Replaces whatever was stored for the action before. Every key_id must be a current recipient (GET …/context-recipients). ' +
      `Each ciphertext at most ${CIPHERTEXT_MAX_BYTES} bytes, all of them together at most ${CONTEXT_TOTAL_MAX_BYTES}. Held only while the review is open.`,
    request: { params: ActionKeyParam, body: jsonBody(ContextUpload) },
    responses: {
      201: jsonContent(ContextStored, 'Stored'),
      403: problemContent('review_context_not_submitter: only the principal that submitted the paused gate request may share its context'),
      404: problemContent('No paused action with this action_key for this tenant'),
      409: problemContent('review_not_pending: the review already ended; review_context_off: the tenant policy does not share review context for this action'),
      413: problemContent('review_context_too_large: a ciphertext, or all of them together, past the limits (limits says which)'),
    },
  });
  router.openapi(upload, async (c) => {
    const auth = c.var.auth;
    const body = c.req.valid('json');
    const { item } = await findPaused(deps, auth.tenantId, c.req.valid('param').action_key);
    await assertSubmitter(deps, auth, item);
    assertOpen(deps, item);
    if ((await policyMode(deps, item)) !== 'encrypted') {
      throw ProblemError.conflict('review_context_off', 'the tenant policy does not share review context for this action type; nothing was stored');
    }
    const known = new Set((await recipientKeys(deps, auth.tenantId)).map((k) => k.id));
    const errors: FieldError[] = [];
    const seen = new Set<string>();
    const rows: ContextRow[] = [];
    let total = 0;
    body.ciphertexts.forEach((x, i) => {
      const at = `/ciphertexts/${i}`;
      if (!known.has(x.key_id)) errors.push({ in: 'body', path: `${at}/key_id`, message: 'not a current recipient of this action (GET …/context-recipients)', code: 'unknown_recipient' });
      else if (seen.has(x.key_id)) errors.push({ in: 'body', path: `${at}/key_id`, message: 'one ciphertext per recipient key', code: 'duplicate_recipient' });
      seen.add(x.key_id);
      let enc: Uint8Array | undefined;
      let ct: Uint8Array | undefined;
      try {
        enc = fromBase64Url(x.enc);
      } catch {
        errors.push({ in: 'body', path: `${at}/enc`, message: 'expected unpadded base64url', code: 'invalid_base64url' });
      }
      try {
        ct = fromBase64Url(x.ct);
      } catch {
        errors.push({ in: 'body', path: `${at}/ct`, message: 'expected unpadded base64url', code: 'invalid_base64url' });
      }
      if (enc && enc.length !== 32) errors.push({ in: 'body', path: `${at}/enc`, message: 'expected the 32-byte X25519 encapsulated key', code: 'invalid_length' });
      if (ct && ct.length <= 16) errors.push({ in: 'body', path: `${at}/ct`, message: 'expected a ChaCha20-Poly1305 ciphertext longer than its 16-byte tag', code: 'invalid_length' });
      if (ct && ct.length > CIPHERTEXT_MAX_BYTES) throw tooLarge(`ciphertext ${i} is past the limit of ${CIPHERTEXT_MAX_BYTES} bytes; nothing was stored`);
      if (enc && ct) {
        total += ct.length + enc.length;
        rows.push({ tenantId: auth.tenantId, actionKey: item.actionKey, reviewKeyId: x.key_id, enc, ct, createdAt: now() });
      }
    });
    if (total > CONTEXT_TOTAL_MAX_BYTES) throw tooLarge(`the ciphertexts together are past the limit of ${CONTEXT_TOTAL_MAX_BYTES} bytes; nothing was stored`);
    if (errors.length > 0) throw ProblemError.validation(errors, `${errors.length} ciphertext field${errors.length === 1 ? '' : 's'} refused; nothing was stored`);
    // The seal that ends the review erases what is stored here; checking again inside the write
    // would not help, since the sweep erases anything that lands after it (./sweep.ts).
    await contexts.replaceContexts(auth.tenantId, item.actionKey, rows);
    return c.json({ action_key: item.actionKey, status: 'available' as const, stored: rows.length }, 201);
  });

  const withdraw = defineRoute({
    method: 'delete',
    path: '/v1/reviews/{action_key}/context',
    operationId: 'submitReviewContextWithdrawal',
    tags: ['reviews'],
    auth: deps.auth.keyOrSession('gate:submit'),
    summary: 'For the submitter of a paused action: erase the review context it shared (the employee withdrew the action)',
    request: { params: ActionKeyParam },
    responses: {
      200: jsonContent(ContextWithdrawn, 'Erased'),
      403: problemContent('review_context_not_submitter'),
      404: problemContent('No paused action with this action_key for this tenant'),
    },
  });
  router.openapi(withdraw, async (c) => {
    const auth = c.var.auth;
    const { item } = await findPaused(deps, auth.tenantId, c.req.valid('param').action_key);
    await assertSubmitter(deps, auth, item);
    const erased = await contexts.eraseContexts(auth.tenantId, item.actionKey);
    return c.json({ action_key: item.actionKey, erased, status: contextStatus(item, now(), 0) }, 200);
  });

  const fetchContext = defineRoute({
    method: 'get',
    path: '/v1/reviews/{action_key}/context',
    operationId: 'getReviewContext',
    tags: ['reviews'],
    auth: deps.auth.keyOrSession('reviews:decide'),
    summary: 'For a person who may decide the action: the review context ciphertext sealed to one of their own device keys',
    description:
      'Open it in the browser with the device’s private key (shared/hpke.ts openReviewContext), then recompute payload_hash from the plaintext (checkReviewContext) ' +
      'and compare it with the signed record’s before deciding.',
    request: { params: ActionKeyParam, query: ContextQuery },
    responses: {
      200: jsonContent(ContextCiphertext, 'The ciphertext for this device'),
      403: problemContent('person_required: a service account has no review keys'),
      404: problemContent('not_found: no paused action, or no active key of yours with this key_id; review_context_not_shared: nothing was shared with this device'),
      410: problemContent('review_context_expired: the review ended, and the context was erased with it'),
    },
  });
  router.openapi(fetchContext, async (c) => {
    const auth = c.var.auth;
    const personId = requirePerson(auth);
    const { key_id } = c.req.valid('query');
    const { item, record } = await findPaused(deps, auth.tenantId, c.req.valid('param').action_key);
    const own = (await contexts.listKeys(auth.tenantId, personId)).find((k) => k.id === key_id && k.revokedAt === null);
    if (!own) throw ProblemError.notFound('no active review key of yours with this key_id');
    if (contextStatus(item, now(), 1) === 'expired') {
      throw new ProblemError({ status: 410, code: 'review_context_expired', detail: 'the review of this action ended; its context was erased with it' });
    }
    const row = await contexts.findContext(auth.tenantId, item.actionKey, own.id);
    if (!row) throw new ProblemError({ status: 404, code: 'review_context_not_shared', detail: 'no review context was shared with this device for this action' });
    await contexts.touchKey(auth.tenantId, own.id, now());
    return c.json(
      {
        action_key: item.actionKey,
        payload_hash: record.payloadHash,
        record_href: `/v1/records/${item.actionKey}`,
        key_id: own.id,
        suite: SUITE,
        enc: toBase64Url(row.enc),
        ct: toBase64Url(row.ct),
      },
      200,
    );
  });

  router.route('/', reviewKeyRoutes(deps));
  return router;
}
