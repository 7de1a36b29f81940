/**
 * Credentials across processes (interface-spec Authentication 1): a revoked key stops working
 * on the very next request in every process that has it cached, and a credential the service
 * cannot read is refused even beside a valid one. Two app instances on one database stand in
 * for two processes; a raw connection (on PostgreSQL, one of the other instance's) stands in for
 * any other writer.
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';

let a: TestContext;
let b: TestContext;
beforeEach(async () => {
  a = await createTestContext();
  b = await createTestContext({ dataDir: a.dataDir });
});
afterEach(async () => {
  await b.close();
  await a.close();
});

const keysOf = (ctx: TestContext, key: string) => ctx.request('/tenant/api-keys', { key });

describe('revocation', () => {
  it('is seen by the very next request of another process that had the key cached', async () => {
    const { apiKey, tenantId } = await a.signup();
    // Both processes resolve (and cache) the key first.
    expect((await keysOf(a, apiKey)).status).toBe(200);
    expect((await keysOf(b, apiKey)).status).toBe(200);
    expect((await keysOf(b, apiKey)).status).toBe(200);

    const keyId = (await a.store.tenants.listApiKeys(tenantId))[0]!.id;
    expect(await a.store.tenants.revokeApiKey(tenantId, keyId, '2025-01-02T00:00:00.000Z')).toBe(true);

    const res = await keysOf(b, apiKey);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthorized');
    expect((await keysOf(a, apiKey)).status).toBe(401);
  });

  it('is seen when any other connection revokes the key with plain SQL', async () => {
    const { apiKey, tenantId } = await a.signup();
    expect((await keysOf(a, apiKey)).status).toBe(200);
    const revoke = "UPDATE api_keys SET status = 'revoked', revoked_at = '2025-01-02T00:00:00.000Z' WHERE tenant_id = ?";
    if (a.engine === 'sqlite') {
      const other = new Database(path.join(a.dataDir, 'companion.db'));
      try {
        other.prepare(revoke).run(tenantId);
      } finally {
        other.close();
      }
    } else {
      await b.sql(revoke, tenantId); // on PostgreSQL, a connection of the other instance's pool
    }
    expect((await keysOf(a, apiKey)).status).toBe(401);
  });

  it('leaves other keys cached and working', async () => {
    const first = await a.signup();
    const second = await a.signup();
    expect((await keysOf(b, second.apiKey)).status).toBe(200);
    const keyId = (await a.store.tenants.listApiKeys(first.tenantId))[0]!.id;
    await a.store.tenants.revokeApiKey(first.tenantId, keyId, '2025-01-02T00:00:00.000Z');
    expect((await keysOf(b, second.apiKey)).status).toBe(200);
    expect((await keysOf(b, first.apiKey)).status).toBe(401);
  });
});

describe('unreadable credentials', () => {
  it.each(['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer a b', 'token', 'Bearer\tx'])(
    'refuses a valid X-Service-Key beside Authorization: %j',
    async (authorization) => {
      const { apiKey } = await a.signup();
      const res = await a.request('/tenant/api-keys', { key: apiKey, headers: { authorization } });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.body.code).toBe('unauthorized');
    },
  );
});
