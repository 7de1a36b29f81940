/**
 * A reviewer's device keys: POST, GET /account/me/review-keys and DELETE
 * /account/me/review-keys/{key_id}, for the signed-in person themselves (a session or a key of a
 * person holding reviews:decide; a service account has no devices to read context on).
 *
 * The browser makes the X25519 key pair (WebCrypto, private key non-extractable, kept in its
 * IndexedDB) and registers only the raw public key, with a device label. A key is checked by
 * sealing a probe to it (RFC 9180 §7.1.4: DH with a small-order point yields the all-zero shared
 * secret, which DHKEM refuses), so a key no browser could seal to is refused up front. Revoking
 * a key erases every ciphertext made for it.
 */
import { fromBase64Url, toBase64Url, utf8 } from '../../shared/encoding.ts';
import { sealReviewContext } from '../../shared/hpke.ts';
import type { AuthContext } from '../core/auth.ts';
import { rfc3339 } from '../core/clock.ts';
import { ProblemError } from '../core/errors.ts';
import { createRouter, defineRoute, jsonBody, jsonContent, problemContent } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { KEYS_PER_PERSON_MAX, ReviewKeyList, ReviewKeyParam, ReviewKeyRequest, ReviewKeyResponse } from './schema.ts';
import type { ReviewKeyRow } from './store.ts';

/** 403 unless the credential acts for a person. */
export function requirePerson(auth: AuthContext): string {
  const principal = auth.principal;
  if (principal?.kind !== 'person') {
    throw new ProblemError({
      status: 403,
      code: 'person_required',
      detail: 'review keys and review context belong to people: sign in as the person, or use a key of theirs, not a service account’s',
    });
  }
  return principal.id;
}

export function keyView(k: ReviewKeyRow) {
  return {
    id: k.id,
    person_id: k.personId,
    public_key: toBase64Url(k.publicKey),
    label: k.label,
    status: k.revokedAt === null ? ('active' as const) : ('revoked' as const),
    created_at: k.createdAt,
    last_used_at: k.lastUsedAt,
    revoked_at: k.revokedAt,
  };
}

async function sealable(publicKey: Uint8Array): Promise<boolean> {
  try {
    await sealReviewContext(publicKey, utf8('probe'), { action_key: 'probe', payload_hash: 'probe' });
    return true;
  } catch {
    return false;
  }
}

export function reviewKeyRoutes(deps: RouteDeps) {
  const router = createRouter();
  const now = () => rfc3339(deps.clock.now());
  const keys = deps.store.reviewContexts;

  const create = defineRoute({
    method: 'post',
    path: '/account/me/review-keys',
    operationId: 'createReviewKey',
    tags: ['account'],
    auth: deps.auth.keyOrSession('reviews:decide'),
    summary: 'Register a device’s X25519 public key to receive review context (the signed-in person’s own)',
    description:
      'The device keeps the private key (WebCrypto, non-extractable); the service stores the public key, the label, when it was created and last used. ' +
      `At most ${KEYS_PER_PERSON_MAX} active keys per person.`,
    request: { body: jsonBody(ReviewKeyRequest) },
    responses: {
      201: jsonContent(ReviewKeyResponse, 'The key, registered'),
      409: problemContent(`review_key_taken: this public key is registered already; review_keys_limit: ${KEYS_PER_PERSON_MAX} active keys already`),
    },
  });
  router.openapi(create, async (c) => {
    const personId = requirePerson(c.var.auth);
    const body = c.req.valid('json');
    let publicKey: Uint8Array;
    try {
      publicKey = fromBase64Url(body.public_key);
    } catch {
      publicKey = new Uint8Array(0);
    }
    if (publicKey.length !== 32 || !(await sealable(publicKey))) {
      throw ProblemError.validation([
        { in: 'body', path: '/public_key', message: 'expected a raw X25519 public key that HPKE can seal to (RFC 9180 §7.1.4)', code: 'review_key_invalid' },
      ]);
    }
    const tenantId = c.var.auth.tenantId;
    const active = (await keys.listKeys(tenantId, personId)).filter((k) => k.revokedAt === null);
    if (active.length >= KEYS_PER_PERSON_MAX) {
      throw ProblemError.conflict('review_keys_limit', `a person holds at most ${KEYS_PER_PERSON_MAX} active review keys; revoke one first`);
    }
    const row: ReviewKeyRow = { id: deps.ids.next('rvk'), tenantId, personId, publicKey, label: body.label, createdAt: now(), lastUsedAt: null, revokedAt: null };
    if ((await keys.addKey(row)) === 'taken') throw ProblemError.conflict('review_key_taken', 'this public key is registered already');
    return c.json({ review_key: keyView(row) }, 201);
  });

  const list = defineRoute({
    method: 'get',
    path: '/account/me/review-keys',
    operationId: 'listReviewKeys',
    tags: ['account'],
    auth: deps.auth.keyOrSession('reviews:decide'),
    summary: 'The signed-in person’s review keys, with device label and last use, revoked ones included',
    responses: { 200: jsonContent(ReviewKeyList, 'Oldest first') },
  });
  router.openapi(list, async (c) => {
    const personId = requirePerson(c.var.auth);
    return c.json({ review_keys: (await keys.listKeys(c.var.auth.tenantId, personId)).map(keyView) }, 200);
  });

  const revoke = defineRoute({
    method: 'delete',
    path: '/account/me/review-keys/{key_id}',
    operationId: 'submitReviewKeyRevocation',
    tags: ['account'],
    auth: deps.auth.keyOrSession('reviews:decide'),
    summary: 'Revoke one of the signed-in person’s review keys; every review context sealed to it is erased',
    request: { params: ReviewKeyParam },
    responses: {
      200: jsonContent(ReviewKeyResponse, 'The key, revoked'),
      404: problemContent('No active review key with this id for the signed-in person'),
    },
  });
  router.openapi(revoke, async (c) => {
    const personId = requirePerson(c.var.auth);
    const { key_id } = c.req.valid('param');
    const tenantId = c.var.auth.tenantId;
    if (!(await keys.revokeKey(tenantId, personId, key_id, now()))) throw ProblemError.notFound('no active review key with this id for the signed-in person');
    const row = (await keys.listKeys(tenantId, personId)).find((k) => k.id === key_id)!;
    return c.json({ review_key: keyView(row) }, 200);
  });

  return router;
}
