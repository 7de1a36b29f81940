/**
 * client_nonce on every gate pack: an optional random value committed in payload_hash simply by
 * being part of the body (DESIGN.md §3), so a payload cannot be confirmed by hashing a guess;
 * a malformed one is a 422 naming the field; the service keeps it nowhere.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalBytes } from '../../shared/canonical-json.ts';
import { GATE_PACKS } from '../../companion/packs/manifest.ts';
import { freshTenantContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { gateBody } from './pack-fixtures.ts';

let ctx: TestContext;
let key: string;
beforeEach(async () => ({ ctx, key } = await freshTenantContext()));
afterEach(async () => ctx.close());

const gate = (json: unknown, path = '/v1/gate') => ctx.request(path, { json, key });
const nonce = () => randomBytes(16).toString('base64url');
/** payload_hash recomputed here from the shared canonical JSON: the body without idempotency_key. */
const expectedHash = (body: Record<string, unknown>) => {
  const { idempotency_key: _k, ...payload } = body;
  return createHash('sha256').update(canonicalBytes(payload)).digest('hex');
};

describe('client_nonce', () => {
  it('is accepted by every pack on /v1/gate and /{vertical}/proposed-action, and payload_hash commits to it', async () => {
    for (const name of GATE_PACKS) {
      const [a, b] = [nonce(), nonce()];
      const first = gateBody(name, { client_nonce: a });
      const second = gateBody(name, { client_nonce: b });
      const r1 = await gate(first);
      const r2 = await gate(second);
      expect(r1.status, r1.text).toBe(201);
      expect(r2.status, r2.text).toBe(201);
      // The same body with two nonces: two hashes, each SHA-256 of the JCS of the body as sent.
      expect(r1.body.payload_hash).toBe(expectedHash(first));
      expect(r2.body.payload_hash).toBe(expectedHash(second));
      expect(r1.body.payload_hash).not.toBe(r2.body.payload_hash);
      // Without it, the hash is the bare body's: what a guesser could compute.
      const { client_nonce: _n, ...bare } = first;
      expect(r1.body.payload_hash).not.toBe(expectedHash(bare));
      expect(r1.body.verify_request.payload_hash).toBe(r1.body.payload_hash);

      const { pack: _p, ...onPath } = gateBody(name, { client_nonce: nonce() });
      const viaPath = await gate(onPath, `/${name}/proposed-action`);
      expect(viaPath.status, viaPath.text).toBe(201);
      expect(viaPath.body.payload_hash).toBe(expectedHash(onPath));
    }
  });

  it('accepts 32 hex digits as well as unpadded base64url', async () => {
    const hex = randomBytes(16).toString('hex');
    const body = gateBody('medicine', { client_nonce: hex });
    const res = await gate(body);
    expect(res.status, res.text).toBe(201);
    expect(res.body.payload_hash).toBe(expectedHash(body));
  });

  it('a retry with the same idempotency_key and nonce replays; a new nonce under the same key is refused', async () => {
    const body = gateBody('law', { client_nonce: nonce(), idempotency_key: 'nonce-retry-1' });
    const first = await gate(body);
    expect(first.status).toBe(201);
    const again = await gate(body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    const changed = await gate({ ...body, client_nonce: nonce() });
    expect(changed.status).toBe(422);
  });

  it('rejects a malformed nonce with a 422 naming the field, on every pack, without echoing it', async () => {
    const bad = ['short', 'x'.repeat(65), 'has spaces in it but is long enough', 'padded+base64/with=padding==xx', 'ünïcödé-ünïcödé-ünïcödé', 1234567890, null, ''];
    for (const name of GATE_PACKS) {
      for (const value of bad) {
        const res = await gate(gateBody(name, { client_nonce: value }));
        expect(res.status, `${name} ${JSON.stringify(value)}`).toBe(422);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(res.body.errors?.map((e: { path: string }) => e.path), res.text).toEqual(["/client_nonce"]);
        if (typeof value === 'string' && value.length > 3) expect(res.text).not.toContain(value);
      }
    }
    // A bad nonce is reported beside every other bad field.
    const both = await gate(gateBody('defense', { client_nonce: 'short', action_type: 'nope' }));
    expect(both.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['/action_type', '/client_nonce']);
  });

  it('is listed among every gate pack\'s optional fields and documented in the OpenAPI description', async () => {
    const packs = await ctx.request('/v1/packs');
    for (const p of packs.body.packs.filter((p: { kind: string }) => p.kind === 'gate')) expect(p.optional_fields, p.name).toContain('client_nonce');
    const doc = await ctx.request('/openapi.json');
    const schemas = doc.body.components.schemas as Record<string, { properties?: Record<string, { description?: string }> }>;
    const gateSchemas = Object.entries(schemas).filter(([n]) => /(GateRequest|ProposedActionRequest)$/.test(n) && n !== 'GateRequest');
    expect(gateSchemas).toHaveLength(GATE_PACKS.length * 2);
    for (const [n, s] of gateSchemas) expect(s.properties?.client_nonce?.description, n).toMatch(/^Recommended for every client/);
  });

  it('is stored nowhere: not in the database files, not in the log', async () => {
    const nonces: string[] = [];
    for (const name of GATE_PACKS) {
      const n = nonce();
      nonces.push(n);
      const res = await gate(gateBody(name, { client_nonce: n, idempotency_key: `stored-${name}` }));
      expect(res.status).toBe(201);
      // The answer does not carry it either: it is the caller's to keep.
      expect(res.text).not.toContain(n);
    }
    // A refused request (another field bad) does not leak it into the log either.
    const refused = nonce();
    nonces.push(refused);
    await gate(gateBody('law', { client_nonce: refused, unknown_field: 1 }));
    const stored = await ctx.storedBytes();
    expect(stored.length).toBeGreaterThan(0);
    for (const { name: file, bytes } of stored) {
      for (const n of nonces) expect(bytes.includes(Buffer.from(n)), `nonce in ${file}`).toBe(false);
    }
    const logged = JSON.stringify(ctx.log.entries);
    for (const n of nonces) expect(logged).not.toContain(n);
  });
});
