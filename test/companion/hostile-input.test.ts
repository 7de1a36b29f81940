/**
 * Hostile input over every route of the OpenAPI description: lone surrogates, invalid UTF-8,
 * duplicate member names, 10,000-deep nesting, maximal strings, wrong types, unknown and
 * undecodable query parameters and credentials. Each answers 4xx problem+json, nothing stored
 * changes (a digest of every table before and after), and no canary the requests carried
 * appears anywhere in what the service logged.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCANNER_WORST_CASES } from '../helpers/scanner-worst-cases.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';

const MAX_BODY = 1_048_576;
const CANARY = 'CANARY-7c1e9a';
let ctx: TestContext;
let doc: any;
let apiKey: string;
let n = 0;
const canary = () => `${CANARY}-${++n}`;

beforeAll(async () => {
  ctx = await createTestContext({ env: { SVC_MAX_BODY_BYTES: String(MAX_BODY) } });
  doc = (await ctx.request('/openapi.json')).body;
  ({ apiKey } = await ctx.signup());
});
afterAll(async () => {
  await ctx.close();
});

interface Operation {
  method: string;
  path: string;
  /** The documented path with its parameters filled and its required query present. */
  url: string;
  json: boolean;
  /** Top-level body member names the schema declares (across its oneOf alternatives). */
  members: string[];
}

function resolve(schema: any): any {
  return schema?.$ref ? resolve(doc.components.schemas[schema.$ref.split('/').pop()]) : schema;
}

function memberNames(schema: any): string[] {
  const s = resolve(schema) ?? {};
  const names = new Set<string>(Object.keys(s.properties ?? {}));
  for (const sub of [...(s.oneOf ?? []), ...(s.anyOf ?? [])]) for (const k of memberNames(sub)) names.add(k);
  if (s.type === 'array') for (const k of memberNames(s.items)) names.add(k);
  return [...names];
}

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[method];
      if (!op) continue;
      const filled = path.replace('{vertical}', 'law').replace('{action_key}', 'law:proposed-action:01JD3Q8Z5V7N4M2K6H8G0F1E2D');
      const needsPack = (op.parameters ?? []).some((p: any) => p.name === 'policy_pack');
      const schema = op.requestBody?.content?.['application/json']?.schema;
      out.push({ method: method.toUpperCase(), path, url: needsPack ? `${filled}?policy_pack=law` : filled, json: schema !== undefined, members: memberNames(schema) });
    }
  }
  return out;
}

async function storeDigest(): Promise<string> {
  const hash = createHash('sha256');
  for (const { table, rows } of await ctx.dump()) {
    const lines = rows.map((r) => JSON.stringify(r, (_k, v) => (Buffer.isBuffer(v) ? v.toString('hex') : v))).sort();
    hash.update(`${table}\n${lines.join('\n')}\n`);
  }
  return hash.digest('hex');
}

const utf8 = (s: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(s) as Uint8Array<ArrayBuffer>;

/** Hostile JSON bodies for one operation: [label, bytes]. */
function hostileBodies(op: Operation): [string, Uint8Array<ArrayBuffer>][] {
  const member = op.members[0] ?? 'pack';
  const everyMember = (value: (name: string) => string) => `{${op.members.map((m) => `${JSON.stringify(m)}:${value(m)}`).join(',')}}`;
  const longEach = Math.floor((MAX_BODY - 64 * op.members.length) / Math.max(1, op.members.length)) - 32;
  const c = canary();
  const invalid = utf8(`{"${member}":"${c} XX"}`);
  invalid[invalid.length - 3] = 0xff;
  return [
    ['a lone surrogate, escaped', utf8(everyMember(() => `"${canary()} \\ud800"`))],
    // CESU-8 / WTF-8 bytes of U+D800: not UTF-8 at all (RFC 3629 §3).
    ['a lone surrogate, raw', concat(utf8(`{"${member}":"${canary()} `), Uint8Array.of(0xed, 0xa0, 0x80), utf8('"}'))],
    ['invalid UTF-8', invalid],
    ['duplicate member names', utf8(`{"${member}":"${canary()}","${member}":"${canary()}"}`)],
    ['10,000-deep nesting', utf8(`{"${member}":${'['.repeat(10_000)}"${canary()}"${']'.repeat(10_000)}}`)],
    ['maximal strings in every member', utf8(everyMember(() => JSON.stringify(`${canary()}${'A'.repeat(Math.max(0, longEach))}`)))],
    ['maximal member names', utf8(`{${JSON.stringify(`${canary()}${'k'.repeat(MAX_BODY - 200)}`)}:1}`)],
    ['wrong types in every member', utf8(everyMember((m) => (m.length % 2 === 0 ? `[${JSON.stringify(canary())}]` : `{"${canary()}":1}`)))],
    ['an unsafe integer', utf8(`{"${member}":123456789012345678901234567890}`)],
    ['a bare string', utf8(JSON.stringify(canary()))],
    ['not JSON', utf8(`${canary()} {`)],
  ];
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
}

const failures: string[] = [];

function expectRefused(res: { status: number; headers: Headers; body: any }, what: string): void {
  const problem = res.headers.get('content-type') === 'application/problem+json' && typeof res.body.code === 'string';
  if (res.status < 400 || res.status >= 500 || !problem) failures.push(`${what}: ${res.status} ${res.headers.get('content-type')}`);
}

describe('hostile input over every route', () => {
  it('answers 4xx problem+json, changes nothing stored and logs no canary', async () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(20);
    const before = await storeDigest();

    for (const op of ops) {
      const where = `${op.method} ${op.path}`;
      if (op.json) {
        for (const [label, bytes] of hostileBodies(op)) {
          const res = await ctx.request(op.url, { method: op.method, raw: bytes, key: apiKey, headers: { 'content-type': 'application/json' } });
          expectRefused(res, `${where}: ${label}`);
          // A refusal may name the caller's fields, but never echoes unbounded input back.
          if (res.text.length > 16_384) failures.push(`${where}: ${label}: a ${res.text.length}-character answer`);
        }
      }
      // Routes that declare no query parameter get a strict empty query from core/router.ts
      // on the ops line of work; until then only routes that declare one are held to it here.
      const declaresQuery = (doc.paths[op.path][op.method.toLowerCase()].parameters ?? []).some((p: { in: string }) => p.in === 'query');
      const sep = op.url.includes('?') ? '&' : '?';
      for (const [label, query] of !declaresQuery && !op.json ? [] : [
        ['an unknown query parameter', `${sep}${canary()}=1`],
        ['an undecodable query value', `${sep}limit=%ED%A0%80${canary()}`],
      ] as const) {
        const res = await ctx.request(`${op.url}${query}`, { method: op.method, key: apiKey, ...(op.json ? { json: {} } : {}) });
        expectRefused(res, `${where}: ${label}`);
      }
      // A key that is sent must be valid, on protected and optional-key routes alike.
      const security: object[] = doc.paths[op.path][op.method.toLowerCase()].security ?? [];
      if (security.length > 0) {
        const badKey = await ctx.request(op.url, { method: op.method, headers: { 'x-service-key': `svc_test_${canary()}` }, ...(op.json ? { json: {} } : {}) });
        if (badKey.status !== 401) failures.push(`${where}: a bad key: ${badKey.status}`);
      }
    }

    expect(failures).toEqual([]);
    expect(await storeDigest()).toBe(before);
    const logged = JSON.stringify(ctx.log.entries);
    expect(logged).not.toContain(CANARY);
    expect(ctx.log.entries.filter((e) => e.level === 'error')).toEqual([]);
  }, 120_000);
});

describe("the policy scanners' worst cases", () => {
  it.each(Object.entries(SCANNER_WORST_CASES))('refuses %s near the body limit, as a value and as a member name', async (_label, make) => {
    const big = make(MAX_BODY - 1024);
    const before = await storeDigest();
    const asLabel = await ctx.request('/tenant/policy?policy_pack=law', { method: 'PUT', json: { label: big }, key: apiKey });
    expect(asLabel.status).toBe(422);
    expect(asLabel.body.code).toBe('raw_content_rejected');
    expect(asLabel.body.errors).toEqual([expect.objectContaining({ path: '/label', code: 'raw_material.too_long' })]);
    const asName = await ctx.request('/tenant/policy/preview?policy_pack=law', { json: { policy: { [big]: 1 }, samples: [{}] }, key: apiKey });
    expect(asName.status).toBe(422);
    expect(asName.text.length).toBeLessThan(16_384);
    expect(await storeDigest()).toBe(before);
  });
});
