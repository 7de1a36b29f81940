/**
 * Every operation of the service's own OpenAPI description, called once against the compiled
 * service started exactly as `npm start` starts it, with a valid credential of the kind the
 * operation declares, real values in its path (an action_key from a gate call, a run_key, a
 * webhook delivery) and a body generated from its request schema: none may answer 5xx. The
 * routes under test are those the build serves, so a file the build forgot (say the export
 * schemas) shows here as the 500 a user would meet.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveWebhookKey } from '../../shared/webhook-signature.ts';
import { listenLoopback } from '../helpers/loopback-server.ts';
import type { LoopbackServer } from '../helpers/loopback-server.ts';
import { npmStart, requireBuild } from './compiled-service.ts';
import type { CompiledService } from './compiled-service.ts';
import { buildRequest, operations } from './openapi-requests.ts';
import type { Known, Operation } from './openapi-requests.ts';

let svc: CompiledService;
let receiver: LoopbackServer;
let doc: any;

beforeAll(async () => {
  requireBuild();
  // A webhook receiver on loopback, so the webhook routes have real deliveries and nothing
  // leaves the machine.
  receiver = await listenLoopback((_req, _raw, res) => res.writeHead(204).end());
  // The local billing provider with its operator secret, so the upgrade checkout is offered.
  svc = await npmStart({
    SVC_WEBHOOK_ALLOW_LOOPBACK: '1',
    SVC_EPOCH_SECONDS: '1',
    SVC_LOG_LEVEL: 'warn',
    ARTIFACT_BILLING_SECRET: 'b'.repeat(64),
    SVC_BILLING_LOCAL_SECRET_REF: 'env://ARTIFACT_BILLING_SECRET',
  });
  const res = await fetch(`${svc.url}/openapi.json`);
  expect(res.status).toBe(200);
  doc = await res.json();
});

afterAll(async () => {
  if (svc) expect(await svc.stop()).toEqual({ code: 0, signal: null });
  await receiver?.close();
});

const LAW_CONTEXT = { matter_band: 'moderate', tool_id: 'drafting-assistant', doctrine_anchor: 'competence', jurisdiction: 'US-NY' };

interface Credentials {
  apiKey: string;
  cookie: string;
  csrf: string;
}

/**
 * Operations this suite holds no credential for, answered 401: a chat callback is signed with a
 * secret reference the operator grants the tenant before the service starts (SVC_SECRET_GRANTS),
 * and this tenant is made after the start.
 */
const UNCREDENTIALED = new Set(['POST /integrations/callbacks/{tenant_id}/chat/{target}/open-review-modal']);

function schemesOf(op: any): Set<string> {
  return new Set<string>((op.security ?? []).flatMap((s: Record<string, unknown>) => Object.keys(s)));
}

/** The credential the operation declares: an API key where one is accepted, else the session. */
function authHeaders(op: any, creds: Credentials, method: string): Record<string, string> {
  const schemes = schemesOf(op);
  if (schemes.has('BearerAuth')) return { authorization: `Bearer ${creds.apiKey}` };
  if (schemes.has('ServiceKey')) return { 'x-service-key': creds.apiKey };
  if (schemes.has('ServiceAccountSession')) {
    return { cookie: creds.cookie, ...(method === 'get' ? {} : { 'x-csrf-token': creds.csrf }) };
  }
  return {};
}

async function json(res: Response): Promise<any> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

describe('the compiled service (npm start) against its own OpenAPI description', () => {
  it('answers every documented operation without a 5xx', async () => {
    const base = svc.url;
    const signup = await fetch(`${base}/signup/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'artifact-smoke@example.com' }),
    });
    expect(signup.status).toBe(201);
    const tenant = await signup.json();
    const session = await fetch(`${base}/account/session`, { method: 'POST', headers: { authorization: `Bearer ${tenant.api_key}` } });
    expect(session.status).toBe(201);
    const cookie = session.headers.get('set-cookie')!.split(';')[0]!;
    const creds: Credentials = { apiKey: tenant.api_key, cookie, csrf: (await session.json()).csrf_token };
    const bearer = { authorization: `Bearer ${creds.apiKey}` };

    // A real gated action (README's first one: a fresh sandbox answers needs_review).
    const gateOnce = async (idempotencyKey: string) => {
      const gate = await fetch(`${base}/v1/gate`, {
        method: 'POST',
        headers: { ...bearer, 'content-type': 'application/json' },
        body: JSON.stringify({
          pack: 'law',
          proposed_action: 'Draft a reply to opposing counsel about the discovery schedule',
          law_context: LAW_CONTEXT,
          idempotency_key: idempotencyKey,
        }),
      });
      expect(gate.status).toBe(201);
      return gate.json();
    };
    const gated = await gateOnce('artifact-smoke');
    expect(gated.decision).toBe('needs_review');

    // The console's hashed script, as its page names it.
    const consolePage = await (await fetch(`${base}/console`)).text();
    const consoleFile = /\/console\/([^"/]+\.js)"/.exec(consolePage)?.[1];
    expect(consoleFile).toBeDefined();

    const values: Known = {
      action_key: gated.action_key,
      reviewed_action_key: gated.action_key,
      review_action_key: gated.action_key,
      action_keys: [gated.action_key],
      verify_request: gated.verify_request,
      tenant_id: tenant.tenant_id,
      vertical: 'law',
      policy_pack: 'law',
      channel: 'webhook',
      target: 'artifact-hooks',
      enabled: true,
      url: `${receiver.origin}/hook`,
      events: ['record.sealed'],
      schema_profile_key: 'oscal-1.2.1-complete',
      export_kind: 'oscal',
      file: consoleFile,
      from_size: '1',
      email: 'artifact-person@example.com',
    };
    // The verify operations take the gate's own verify_request as their whole body.
    // Two more whose valid bodies the schemas do not pin down: a policy preview needs a sample
    // action the pack knows (the README's), a replay a window that is not empty.
    const bodies: Record<string, unknown> = {
      'POST /v1/verify': gated.verify_request,
      'POST /evidence-packets/verify-seal': gated.verify_request,
      'POST /evidence-packets/seal-bundle': gated.verify_request,
      'POST /tenant/policy/preview': {
        policy: { allow_action_types: ['proposed-action'] },
        samples: [{ proposed_action: 'Draft a reply to opposing counsel about the discovery schedule', law_context: LAW_CONTEXT }],
      },
      'POST /tenant/integrations/webhook/{target}/replay': { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 3_600_000).toISOString() },
    };
    let signingKey: string | undefined;
    let routedActionKey: string | undefined;
    // Values that exist only once earlier operations ran, looked up just before they are needed.
    const lookups: Record<string, () => Promise<unknown>> = {
      epoch_seq: async () => {
        let seq: unknown;
        await expect
          .poll(async () => (seq = (await json(await fetch(`${base}/epochs`))).epochs?.[0]?.header?.epoch_seq), { timeout: 20_000 })
          .toBeDefined();
        return String(seq);
      },
      delivery_id: async () => {
        // A decision sealed after the webhook was configured (PUT /tenant/integrations/…) makes one.
        await gateOnce('artifact-smoke-delivery');
        let id: unknown;
        await expect
          .poll(async () => (id = (await json(await fetch(`${base}/tenant/integrations/webhook/artifact-hooks/deliveries`, { headers: bearer }))).deliveries?.[0]?.id), { timeout: 20_000 })
          .toBeDefined();
        return id;
      },
      dispatch_key: async () => {
        let list = await json(await fetch(`${base}/routing/outbox`, { headers: bearer }));
        if (!list.dispatches?.[0]) {
          // A review routed to the webhook target writes a dispatch with its seal (README, Review
          // routing); without SVC_OUTBOX_EXTERNAL_SEND it is only ever prepared, never posted.
          const policy = await fetch(`${base}/tenant/policy?policy_pack=law`, {
            method: 'PUT',
            headers: { ...bearer, 'content-type': 'application/json' },
            body: JSON.stringify({ review_routes: { 'proposed-action': 'webhook:artifact-hooks' } }),
          });
          expect(policy.status).toBeLessThan(300);
          routedActionKey = (await gateOnce('artifact-smoke-routed')).action_key;
          list = await json(await fetch(`${base}/routing/outbox`, { headers: bearer }));
        }
        return list.dispatches?.[0]?.dispatch_key;
      },
    };

    // Ending the session last, so every operation before it has one.
    const ops = operations(doc);
    const last = (o: Operation) => (o.method === 'post' && o.path === '/account/logout' ? 1 : 0);
    ops.sort((a, b) => last(a) - last(b));

    const outcomes: { op: string; status: number; code?: string }[] = [];
    for (const o of ops) {
      const name = `${o.method.toUpperCase()} ${o.path}`;
      for (const p of o.op.parameters ?? []) {
        const lookup = lookups[p.name];
        if (lookup && (p.in === 'path' || p.required)) {
          const v = await lookup();
          if (v !== undefined) values[p.name] = v;
        }
      }
      // `from` is also a body property (webhook replay: a date-time); only here is it an epoch.
      let opValues = o.path === '/epochs/consistency' ? { ...values, from: values.epoch_seq ?? (await lookups.epoch_seq!()) } : values;
      // The routed action's decision comes back signed from its route.
      if (o.path.endsWith('/review-decision') && routedActionKey) opValues = { ...values, action_key: routedActionKey };
      const req = buildRequest(doc, base, o, opValues);
      if (name in bodies) req.init.body = JSON.stringify(bodies[name]);
      req.init.headers = { ...(req.init.headers as Record<string, string>), ...authHeaders(o.op, creds, o.method) };
      // A webhook route's callback is signed with the key derived from the secret its setup
      // answered once: "sha256=" + hex HMAC-SHA256 over the exact raw body.
      if (schemesOf(o.op).has('ServiceCallbackSignature') && signingKey && o.path.includes('/{channel}/')) {
        const mac = createHmac('sha256', signingKey).update(String(req.init.body)).digest('hex');
        req.init.headers = { ...req.init.headers, 'x-service-signature': `sha256=${mac}` };
      }
      const res = await fetch(req.url, req.init);
      const body = await json(res);
      outcomes.push({ op: name, status: res.status, ...(typeof body?.code === 'string' ? { code: body.code } : {}) });
      if (res.status < 300) {
        if (name === 'POST /tenant/exports/validation-runs') values.run_key = body.run.run_key;
        if (name === 'POST /account/billing/upgrade-checkout') values.checkout_id = body.checkout_id;
        // The person added here, and their key (never the key this suite signs in with).
        if (name === 'POST /account/people') Object.assign(values, { person_id: body.person?.id, key_id: body.api_key_id });
        if (typeof body?.signing_secret === 'string') signingKey = deriveWebhookKey(body.signing_secret);
      }
    }

    const table = outcomes.map((r) => `${r.status} ${r.op}${r.code ? ` (${r.code})` : ''}`).join('\n');
    console.log(`${outcomes.length} operations of GET /openapi.json called on the compiled service:\n${table}`);
    expect(outcomes.length).toBe(ops.length);
    expect(outcomes.filter((r) => r.status >= 500), table).toEqual([]);
    // Every operation took the credential it declares as valid (and CSRF-bound); a 403 for a
    // capability the session lacks is the operation's own rule, not a bad credential.
    const refused = (r: { status: number; code?: string }) => r.status === 401 || (r.status === 403 && r.code === 'csrf_token_invalid');
    expect(outcomes.filter((r) => refused(r) && !UNCREDENTIALED.has(r.op)), table).toEqual([]);
    // And every body made from the description passed the service's validation of it.
    expect(outcomes.filter((r) => r.code === 'validation_failed'), table).toEqual([]);
  });
});
