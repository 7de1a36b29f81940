/**
 * Setup shared by the routing tests: a tenant whose operator granted it the secret references
 * its routes use (grants are keyed by tenant id, so the data directory is reopened with them),
 * a loopback stand-in for the platforms that counts connections as well as requests, and an
 * independent signer for callbacks written here with node:crypto.
 */
import { createHmac } from 'node:crypto';
import type http from 'node:http';
import { listenLoopback } from '../helpers/loopback-server.ts';
import { expect } from 'vitest';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { gateBody } from './pack-fixtures.ts';

export const SECRETS = {
  token: 'env://ROUTING_TEST_TOKEN',
  callback: 'env://ROUTING_TEST_CALLBACK',
  slack: 'env://ROUTING_TEST_SLACK_SIGNING',
} as const;
export const VALUES = {
  ROUTING_TEST_TOKEN: 'route-bearer-token-value',
  ROUTING_TEST_CALLBACK: 'workflow-callback-secret-value',
  ROUTING_TEST_SLACK_SIGNING: '8f742231b10e8888abcd99yyyzzz85a5',
};

export interface RoutedTenant {
  ctx: TestContext;
  key: string;
  tenantId: string;
}

export async function routedTenant(env: Record<string, string> = {}): Promise<RoutedTenant> {
  Object.assign(process.env, VALUES);
  const base = await createTestContext();
  const { apiKey: key, tenantId } = await base.signup();
  const dataDir = base.dataDir;
  await base.deps.lifecycle.stop();
  base.store.close();
  const ctx = await createTestContext({
    dataDir,
    takeOver: true,
    env: { SVC_WEBHOOK_ALLOW_LOOPBACK: '1', SVC_PUBLIC_BASE_URL: 'https://gate.example.com', SVC_SECRET_GRANTS: JSON.stringify({ [tenantId]: Object.values(SECRETS) }), ...env },
  });
  return { ctx, key, tenantId };
}

/** Puts a route and expects it saved. */
export async function putRoute(t: RoutedTenant, channel: string, target: string, body: unknown) {
  const res = await t.ctx.request(`/tenant/integrations/${channel}/${target}`, { method: 'PUT', json: body, key: t.key });
  expect(res.status, res.text).toBeLessThan(300);
  return res;
}

/** Law actions route where the tenant policy says: proposed-action to chat, legal-research-memo to a webhook. */
export async function lawRoutesPolicy(t: RoutedTenant, routes: Record<string, string>) {
  const res = await t.ctx.request('/tenant/policy?policy_pack=law', { method: 'PUT', json: { review_action_types: Object.keys(routes), review_routes: routes }, key: t.key });
  expect(res.status, res.text).toBeLessThan(300);
}

export async function pauseMedicineExport(t: RoutedTenant) {
  const res = await t.ctx.request('/v1/gate', { json: gateBody('medicine', { action_type: 'phi-export' }), key: t.key });
  expect(res.body).toMatchObject({ decision: 'needs_review', review_route: 'workflow:privacy-office' });
  return res.body;
}

export async function pauseLaw(t: RoutedTenant, actionType = 'proposed-action') {
  const res = await t.ctx.request('/v1/gate', { json: gateBody('law', actionType === 'proposed-action' ? {} : { action_type: actionType }), key: t.key });
  expect(res.body.decision).toBe('needs_review');
  return res.body;
}

export interface StandIn {
  url: string;
  connections: number;
  requests: { headers: http.IncomingHttpHeaders; raw: Buffer; url: string }[];
  close(): Promise<void>;
}

/** A loopback stand-in for a workflow or chat platform: records every connection and request. */
export async function startStandIn(answer: (raw: Buffer) => { status: number; body?: string; headers?: Record<string, string> } = () => ({ status: 201 })): Promise<StandIn> {
  const requests: StandIn['requests'] = [];
  const loopback = await listenLoopback((req, raw, res) => {
    requests.push({ headers: req.headers, raw, url: req.url ?? '' });
    const a = answer(raw);
    res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers }).end(a.body ?? '{}');
  });
  const standIn: StandIn = { url: `${loopback.origin}/api/now/flow`, connections: 0, requests, close: loopback.close };
  loopback.server.on('connection', () => standIn.connections++);
  return standIn;
}

/** sha256=<hex HMAC-SHA256(key, raw)>, computed independently of the service's code. */
export function sha256Sig(key: string, raw: string | Buffer): string {
  return `sha256=${createHmac('sha256', key).update(raw).digest('hex')}`;
}

/** Slack's v0 signature of a request body at `timestamp` (Slack "Verifying requests from Slack"). */
export function slackSig(secret: string, timestamp: number | string, raw: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${raw}`).digest('hex')}`;
}

export const nowSeconds = (ctx: TestContext) => Math.floor(ctx.clock.now().getTime() / 1000);
