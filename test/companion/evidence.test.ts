/**
 * The sealing pipeline and the evidence read/verify endpoints, against a real SQLite file and
 * the real keys. Seals are made through the real Sealer (the same one the gate uses).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { payloadHash } from '../../shared/attestation.ts';
import { BUNDLE_FILE_NAMES, buildBundle, verifyBundle } from '../../shared/bundle.ts';
import { sha256Hex } from '../../shared/hash.ts';
import { jwkToPublicKey } from '../../shared/keys.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { failedChecks, verifyEvidence } from '../../shared/verify.ts';
import type { AuthContext } from '../../companion/core/auth.ts';
import { Sealer } from '../../companion/evidence/sealer.ts';
import type { SealOutcome, SealRequest } from '../../companion/evidence/sealer.ts';
import { viewRecord } from '../../companion/evidence/record-view.ts';
import { SANDBOX_ACTION_ALLOWANCE } from '../../companion/metering/credits.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';
import { createTestContext, makeTempDir } from './helpers.ts';
import type { TestContext } from './helpers.ts';

let ctx: TestContext;
beforeEach(async () => {
  ctx = await createTestContext();
});
afterEach(async () => {
  await ctx.close();
});

async function sandboxTenant(): Promise<{ auth: AuthContext; key: string }> {
  const s = await ctx.signup();
  return { auth: { tenantId: s.tenantId, tenantKind: 'sandbox', keyId: 'test' }, key: s.apiKey };
}

function request(auth: AuthContext, overrides: Partial<SealRequest> = {}): SealRequest {
  const body = { pack: 'law', proposed_action: 'draft a reply to opposing counsel' };
  return {
    auth,
    vertical: 'law',
    actionType: 'proposed-action',
    pack: 'law',
    kind: 'gate',
    decision: 'needs_review',
    status: 'sealed',
    reviewRoute: 'browser:legal-review',
    payloadHash: payloadHash(body),
    manifestDigest: sha256Hex('manifest'),
    policyDigest: null,
    details: { next_step: 'Pause until review.' },
    metering: { counted: true, credits: 3 },
    respond: (r) => ({ decision: r.verifyRequest.decision, action_key: r.actionKey, evidence_packet: r.packet, verify_request: r.verifyRequest }),
    ...overrides,
  };
}

const count = async (table: string) => (await ctx.sql<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))[0]!.n;

describe('sealer', () => {
  it('seals concurrent requests into one contiguous, hash-chained tenant log, every seal verifiable', async () => {
    const { auth } = await sandboxTenant();
    const outcomes = await Promise.all(Array.from({ length: 25 }, () => ctx.deps.sealer.seal(request(auth))));
    const keys = trustedKeySet(ctx.deps.keyring.jwks());
    const rows = await Promise.all(outcomes.map(async (o) => (await ctx.store.evidence.findRecord(auth.tenantId, (o.body as any).action_key))!));
    rows.sort((a, b) => a.tenantSeq - b.tenantSeq);
    expect(rows.map((r) => r.tenantSeq)).toEqual([...Array(25).keys()]);
    for (const [i, row] of rows.entries()) {
      const view = viewRecord(row);
      expect(view.attestation.prev_attestation_hash).toBe(i === 0 ? null : rows[i - 1]!.attestationHash);
      const r = await verifyEvidence(view.verifyRequest, keys);
      expect(failedChecks(r)).toEqual([]);
      expect(r.key_status).toBe('sandbox');
    }
    // Sandbox: 25 actions against the allowance, no credits (credits are for production actions).
    expect(await ctx.store.usage.usage(auth.tenantId)).toEqual({ actionsUsed: 25, creditsUsed: 0 });
    // No webhook target subscribes, so nothing is enqueued (interface-spec Events rule 1;
    // subscribed targets are covered in webhooks.test.ts).
    expect(await count('webhook_deliveries')).toBe(0);
  });

  it('keeps the log contiguous when a seal in the middle of a batch is refused after its head was read', async () => {
    const { auth } = await sandboxTenant();
    const refuse = request(auth, {
      onSealed: () => {
        throw new Error('refused inside the transaction');
      },
    });
    const results = await Promise.allSettled([ctx.deps.sealer.seal(request(auth)), ctx.deps.sealer.seal(refuse), ctx.deps.sealer.seal(request(auth))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const [first, , third] = results.map((r) => (r.status === 'fulfilled' ? (r.value.body as any).evidence_packet.seal : null));
    expect(first.attestation.tenant_seq).toBe(0);
    expect(third.attestation.tenant_seq).toBe(1);
    expect(third.attestation.prev_attestation_hash).toBe(first.attestation_hash);
    expect(await count('sealed_records')).toBe(2);
  });

  it('keeps tenant logs apart', async () => {
    const a = await sandboxTenant();
    const b = await sandboxTenant();
    await Promise.all([ctx.deps.sealer.seal(request(a.auth)), ctx.deps.sealer.seal(request(b.auth)), ctx.deps.sealer.seal(request(a.auth))]);
    expect((await ctx.store.evidence.logHead(a.auth.tenantId))?.tenantSeq).toBe(1);
    expect((await ctx.store.evidence.logHead(b.auth.tenantId))?.tenantSeq).toBe(0);
  });

  it('refuses the sandbox action past the allowance with 402 and seals nothing, without failing its neighbours', async () => {
    const { auth } = await sandboxTenant();
    await ctx.store.usage.add(auth.tenantId, SANDBOX_ACTION_ALLOWANCE - 1, 0, '2025-01-01T00:00:00.000Z');
    const other = await sandboxTenant();
    const results = await Promise.allSettled([
      ctx.deps.sealer.seal(request(auth)),
      ctx.deps.sealer.seal(request(auth)),
      ctx.deps.sealer.seal(request(other.auth)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const refused = (results[1] as PromiseRejectedResult).reason;
    expect(refused).toMatchObject({ status: 402, code: 'sandbox_allowance_exhausted' });
    expect(await count('sealed_records')).toBe(2);
    expect((await ctx.store.usage.usage(auth.tenantId)).actionsUsed).toBe(SANDBOX_ACTION_ALLOWANCE);
  });

  it('replays an idempotent request, under 20 concurrent copies, as one sealed and metered action', async () => {
    const { auth } = await sandboxTenant();
    const idem = { scope: 'POST /v1/gate', key: 'retry-1', requestHash: sha256Hex('body-1') };
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => ctx.deps.sealer.seal(request(auth, { idempotency: idem }))));
    expect(new Set(outcomes.map((o) => JSON.stringify(o.body))).size).toBe(1);
    expect(outcomes.filter((o) => !o.replayed)).toHaveLength(1);
    expect(await count('sealed_records')).toBe(1);
    expect((await ctx.store.usage.usage(auth.tenantId)).actionsUsed).toBe(1);

    const reused = ctx.deps.sealer.seal(request(auth, { idempotency: { ...idem, requestHash: sha256Hex('body-2') } }));
    await expect(reused).rejects.toMatchObject({ status: 422, code: 'idempotency_key_reused' });
    expect(await count('sealed_records')).toBe(1);
  });

  it('gathers the requests that arrive while a batch transaction is open into the next batch', async () => {
    // Where a transaction waits on the database (PostgreSQL: each statement a round trip, the
    // commit also the flush to disk), requests arriving meanwhile, over many turns of the event
    // loop, must join the next batch rather than each open a transaction of its own. The
    // database's wait is stood in for by holding the first batch's transaction open.
    const { auth } = await sandboxTenant();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let transactions = 0;
    const batches: number[] = [];
    const sealer = new Sealer({
      ...ctx.deps,
      participants: [],
      store: {
        durable: () => ctx.store.durable(),
        transaction: async (fn, options) => (++transactions === 1 && (await held), ctx.store.transaction(fn, options)),
      },
      observer: { committed: (batch) => batches.push(batch.size) },
    });
    const first = sealer.seal(request(auth));
    const later: Promise<SealOutcome>[] = [];
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setImmediate(r));
      later.push(sealer.seal(request(auth)));
    }
    expect(transactions).toBe(1);
    release();
    const outcomes = await Promise.all([first, ...later]);
    expect(batches).toEqual([1, 20]);
    expect(outcomes.map((o) => (o.body as any).evidence_packet.seal.attestation.tenant_seq)).toEqual([...Array(21).keys()]);
  });
});

describe('evidence endpoints', () => {
  async function sealOne() {
    const t = await sandboxTenant();
    const out = await ctx.deps.sealer.seal(request(t.auth));
    return { ...t, sealed: out.body as any };
  }

  it('GET /v1/records/{action_key} returns the record with a verify request that verifies online', async () => {
    const { key, sealed } = await sealOne();
    const rec = await ctx.request(`/v1/records/${sealed.action_key}`, { key });
    expect(rec.status).toBe(200);
    expect(rec.body).toMatchObject({ action_key: sealed.action_key, decision: 'needs_review', kind: 'gate', next_step: 'Pause until review.' });
    expect(rec.body.evidence_packet).toEqual(sealed.evidence_packet);
    const v = await ctx.request('/v1/verify', { method: 'POST', json: rec.body.verify_request });
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ verified: true, key_status: 'sandbox', dev_key: true, failed_checks: [] });
  });

  it("answers another tenant's record, an unknown key and a wrong vertical with 404", async () => {
    const { key, sealed } = await sealOne();
    const stranger = await ctx.signup();
    expect((await ctx.request(`/v1/records/${sealed.action_key}`, { key: stranger.apiKey })).status).toBe(404);
    expect((await ctx.request(`/law/evidence-packets/${sealed.action_key}`, { key: stranger.apiKey })).status).toBe(404);
    expect((await ctx.request('/v1/records/law:proposed-action:nope', { key })).status).toBe(404);
    expect((await ctx.request(`/medicine/evidence-packets/${sealed.action_key}`, { key })).status).toBe(404);
    const own = await ctx.request(`/law/evidence-packets/${sealed.action_key}`, { key });
    expect(own.status).toBe(200);
    expect(own.body).toEqual(sealed.evidence_packet);
  });

  const tampers: [string, (r: any) => void, string][] = [
    ['action_key', (r) => (r.action_key = r.action_key + '0'), 'packet_hash'],
    ['href', (r) => (r.href = '/law/evidence-packets/x'), 'packet_hash'],
    ['status', (r) => (r.status = 'recorded'), 'packet_hash'],
    ['packet_hash', (r) => (r.packet_hash = '0'.repeat(64)), 'packet_hash'],
    ['decision', (r) => (r.decision = 'allow'), 'packet_hash'],
    ['payload_hash', (r) => (r.payload_hash = '1'.repeat(64)), 'packet_hash'],
    ['review_route', (r) => (r.review_route = null), 'packet_hash'],
    ['seal.signature', (r) => (r.seal.signature = r.seal.signature.slice(0, -2) + (r.seal.signature.endsWith('AA') ? 'AQ' : 'AA')), 'signature'],
    ['seal.attestation', (r) => (r.seal.attestation.tenant_seq += 1), 'signature'],
    ['seal.key_id', (r) => (r.seal.key_id = 'unknown-key'), 'key_identity'],
  ];
  for (const [field, edit, check] of tampers) {
    it(`POST /v1/verify names ${check} when ${field} is edited`, async () => {
      const { sealed } = await sealOne();
      const body = structuredClone(sealed.verify_request);
      edit(body);
      const v = await ctx.request('/v1/verify', { method: 'POST', json: body });
      expect(v.status).toBe(200);
      expect(v.body.verified).toBe(false);
      expect(v.body.failed_checks).toContain(check);
    });
  }

  it('enqueues verify.failed only for a failed verification authenticated with a tenant key', async () => {
    const { key, auth, sealed } = await sealOne();
    // A subscribed target; the delivery worker is not started here, so nothing is sent.
    const put = await ctx.request('/tenant/integrations/webhook/audit', {
      method: 'PUT',
      key,
      json: { enabled: true, config: { url: 'https://hooks.example.com/in', events: ['verify.failed'] } },
    });
    expect(put.status).toBe(201);
    const failedEvents = async () =>
      (await ctx.store.webhooks.listDeliveries({ tenantId: auth.tenantId, target: 'audit', limit: 100, offset: 0 })).filter((d) => d.event === 'verify.failed');
    const bad = { ...sealed.verify_request, decision: 'allow' };
    await ctx.request('/v1/verify', { method: 'POST', json: bad });
    expect(await failedEvents()).toHaveLength(0);
    await ctx.request('/v1/verify', { method: 'POST', json: sealed.verify_request, key });
    expect(await failedEvents()).toHaveLength(0);
    await ctx.request('/v1/verify', { method: 'POST', json: bad, key });
    const events = await failedEvents();
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.body)).toEqual({
      event: 'verify.failed',
      tenant: auth.tenantId,
      created_at: expect.any(String),
      action_key: sealed.action_key,
      href: sealed.verify_request.href,
      vertical: 'law',
      failed_checks: ['packet_hash'],
    });
    const wrongKey = await ctx.request('/v1/verify', { method: 'POST', json: bad, key: 'svc_test_' + 'x'.repeat(43) });
    expect(wrongKey.status).toBe(401);
  });

  it('answers a verify body missing fields with 422 naming every one', async () => {
    const v = await ctx.request('/v1/verify', { method: 'POST', json: { action_key: 'x' } });
    expect(v.status).toBe(422);
    const paths = v.body.errors.map((e: { path: string }) => e.path);
    for (const p of ['/href', '/status', '/packet_hash', '/seal', '/payload_hash']) expect(paths).toContain(p);
  });

  it('publishes a verify kit with no key material', async () => {
    const kit = await ctx.request('/v1/verify/kit');
    expect(kit.status).toBe(200);
    expect(kit.body.checks.map((c: { name: string }) => c.name)).toEqual(['canonical_form', 'packet_hash', 'attestation_hash', 'signature', 'key_identity', 'key_status']);
    expect(kit.text).not.toMatch(/"x"\s*:|BEGIN PUBLIC KEY|PRIVATE/);
  });

  it('GET /tenant/usage counts actions and credits and warns from 80% of the cap', async () => {
    const { key, auth } = await sealOne();
    const u1 = await ctx.request('/tenant/usage', { key });
    expect(u1.body).toMatchObject({ actions_used: 1, cap: 100, remaining: 99, credits_used: 0, cost_cents: 0, warning: null });
    const prod = ctx.productionTenant();
    await ctx.deps.sealer.seal(request({ tenantId: prod.tenantId, tenantKind: 'production', keyId: 'k' }));
    const p = await ctx.request('/tenant/usage', { key: prod.apiKey });
    expect(p.body).toMatchObject({ tenant_kind: 'production', actions_used: 1, cap: null, remaining: null, credits_used: 3, cost_cents: 3, warning: null });
    await ctx.store.usage.add(auth.tenantId, 79, 0, '2025-01-01T00:00:00.000Z');
    const u2 = await ctx.request('/tenant/usage', { key });
    expect(u2.body).toMatchObject({ actions_used: 80, remaining: 20 });
    expect(u2.body.warning).toMatch(/80 of 100/);
  });

  it('a companion seal verifies as a bundle with our verifier, sha256sum and openssl', async () => {
    const { auth, sealed } = await sealOne();
    const view = viewRecord((await ctx.store.evidence.findRecord(auth.tenantId, sealed.action_key))!);
    const jwk = ctx.deps.keyring.jwks().keys.find((k) => k.kid === view.packet.seal.key_id)!;
    const bundle = buildBundle(view.fields, view.packet.seal, jwkToPublicKey(jwk));
    const r = await verifyBundle(bundle, trustedKeySet(ctx.deps.keyring.jwks()));
    expect(failedChecks(r)).toEqual([]);

    const dir = makeTempDir('svc-companion-bundle-');
    try {
      for (const f of BUNDLE_FILE_NAMES) fs.writeFileSync(path.join(dir, f), bundle[f]);
      fs.writeFileSync(path.join(dir, 'key.pem'), JSON.parse(new TextDecoder().decode(bundle['verify.json'])).public_key.pem);
      fs.writeFileSync(path.join(dir, 'keys.json'), JSON.stringify(ctx.deps.keyring.jwks()));
      expect(execFileSync('sha256sum', ['payload.json'], { cwd: dir, encoding: 'utf8' }).slice(0, 64)).toBe(view.attestation.packet_hash);
      const ossl = spawnSync('openssl', ['pkeyutl', '-verify', '-pubin', '-inkey', 'key.pem', '-rawin', '-in', 'attestation.json', '-sigfile', 'attestation.sig'], { cwd: dir });
      expect(ossl.status).toBe(0);
      const cli = spawnSync(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'companion/cli/verify.ts'), dir, '--keys', path.join(dir, 'keys.json')], { encoding: 'utf8', cwd: REPO_ROOT });
      expect(cli.status).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('restart', () => {
  it('keeps records, the tenant log and the production key across a restart', async () => {
    const dataDir = makeTempDir('svc-restart-');
    try {
      const first = await createTestContext({ dataDir });
      const s = await first.signup();
      const auth: AuthContext = { tenantId: s.tenantId, tenantKind: 'sandbox', keyId: 'k' };
      const a = (await first.deps.sealer.seal(request(auth))).body as any;
      const jwks1 = first.deps.keyring.jwks();
      await first.close();

      const second = await createTestContext({ dataDir });
      try {
        expect(second.deps.keyring.jwks()).toEqual(jwks1);
        const rec = await second.request(`/v1/records/${a.action_key}`, { key: s.apiKey });
        expect(rec.status).toBe(200);
        const b = (await second.deps.sealer.seal(request(auth))).body as any;
        expect(b.evidence_packet.seal.attestation.tenant_seq).toBe(1);
        expect(b.evidence_packet.seal.attestation.prev_attestation_hash).toBe(rec.body.evidence_packet.seal.attestation_hash);
      } finally {
        await second.close();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
