/**
 * GET /openapi.json: OpenAPI 3.1.0, interface version 0.1.0, the three security schemes, and
 * every route the app serves (interface-spec Versioning; DESIGN.md §6).
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';

let ctx: TestContext;
let doc: any;
beforeAll(async () => {
  ctx = await createTestContext();
  const res = await ctx.request('/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
});
afterAll(async () => {
  await ctx.close();
});

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('0.1.0');
  });

  it('declares the security schemes BearerAuth, ServiceKey and ServiceAccountSession, the operator MetricsToken and signed callbacks', () => {
    const schemes = doc.components.securitySchemes;
    expect(Object.keys(schemes).sort()).toEqual(['BearerAuth', 'MetricsToken', 'ServiceAccountSession', 'ServiceCallbackSignature', 'ServiceKey']);
    expect(schemes.BearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.ServiceKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Service-Key' });
    expect(schemes.ServiceAccountSession).toMatchObject({ type: 'apiKey', in: 'cookie' });
  });

  it('documents every route the app serves, and nothing it does not', () => {
    const served = new Set(
      ctx.app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method} ${r.path.replace(/:(\w+)(\{[^}]*\})?/g, '{$1}')}`),
    );
    const documented = new Set<string>();
    for (const [p, item] of Object.entries<Record<string, unknown>>(doc.paths)) {
      for (const m of Object.keys(item)) if (METHODS.includes(m)) documented.add(`${m.toUpperCase()} ${p}`);
    }
    expect([...served].sort()).toEqual([...documented].sort());
    for (const route of ['POST /signup/checkout', 'GET /tenant/api-keys', 'GET /.well-known/service-keys.json', 'GET /openapi.json']) {
      expect(documented).toContain(route);
    }
  });

  it('marks API key routes with either scheme and public routes with none', () => {
    expect(doc.paths['/tenant/api-keys'].get.security).toEqual([{ BearerAuth: [] }, { ServiceKey: [] }]);
    expect(doc.paths['/signup/checkout'].post.security).toEqual([]);
    expect(doc.paths['/.well-known/service-keys.json'].get.security).toEqual([]);
  });

  it('documents problem+json errors, generated from the schemas that validate requests', () => {
    const signup = doc.paths['/signup/checkout'].post;
    expect(signup.responses['422'].content['application/problem+json'].schema.$ref).toBe('#/components/schemas/ProblemDetails');
    expect(signup.responses.default.content['application/problem+json']).toBeDefined();
    expect(doc.components.schemas.SignupRequest).toMatchObject({
      type: 'object',
      required: ['email'],
      additionalProperties: false,
      properties: { email: { type: 'string', format: 'email', maxLength: 254 } },
    });
    expect(doc.paths['/tenant/api-keys'].get.responses['401']).toBeDefined();
  });

  it('names every operation with a unique, stable verb-noun operationId', () => {
    const ids: string[] = [];
    for (const item of Object.values<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) if (METHODS.includes(method)) ids.push(op.operationId);
    }
    expect(ids.every((id) => /^[a-z]+[A-Z][A-Za-z0-9]*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.paths['/v1/records/{action_key}'].get.operationId).toBe('getRecord');
    expect(doc.paths['/law/proposed-action'].post.operationId).toBe('gateLawProposedAction');
    expect(doc.paths['/us-regulatory/proposed-action'].post.operationId).toBe('gateUsRegulatoryProposedAction');
  });

  it('declares servers and every tag operations use', () => {
    expect(doc.servers[0]).toMatchObject({ url: '{scheme}://{host}:{port}', variables: { port: { default: '8787' } } });
    const declared = new Set(doc.tags.map((t: { name: string; description: string }) => t.name));
    for (const item of Object.values<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) if (METHODS.includes(method)) for (const tag of op.tags) expect(declared).toContain(tag);
    }
  });

  it('describes every 4xx, 5xx and default answer as problem+json with the one Problem schema, 422 on every operation', () => {
    for (const [p, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (!METHODS.includes(method)) continue;
        expect(Object.keys(op.responses), `${method} ${p}`).toContain('422');
        for (const [status, res] of Object.entries<any>(op.responses)) {
          if (!/^[45]\d\d$|^default$/.test(status)) continue;
          // RFC 6749 §5.2: the OAuth endpoints' 400s are the JSON error responses OAuth clients parse.
          if (status === '400' && res.content?.['application/json']?.schema?.$ref === '#/components/schemas/OAuthError') continue;
          expect(res.content, `${method} ${p} ${status}`).toEqual({ 'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetails' } } });
        }
      }
    }
  });

  it('has no allOf that pairs a referenced object with a closed extension (no response could satisfy it)', () => {
    const offenders: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${at}/${i}`));
      if (typeof node !== 'object' || node === null) return;
      const o = node as Record<string, unknown>;
      if (Array.isArray(o.allOf) && o.allOf.some((part: any) => part?.additionalProperties === false)) offenders.push(at);
      for (const [k, v] of Object.entries(o)) walk(v, `${at}/${k}`);
    };
    walk(doc, '');
    expect(offenders).toEqual([]);
  });
});
