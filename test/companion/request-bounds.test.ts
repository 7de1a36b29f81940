/**
 * Bounded work per request: every string, array and open-ended object that any route accepts
 * (body, query, path, header parameters, as the OpenAPI description publishes them) declares
 * its maximum, so the validator refuses oversized input before any other work runs. A value of
 * any type inside a bounded object (a posted seal's members) is bounded by the strict JSON
 * limits on the whole document (core/strict-json.ts) and the body limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';

let ctx: TestContext;
let doc: any;
beforeAll(async () => {
  ctx = await createTestContext();
  doc = (await ctx.request('/openapi.json')).body;
});
afterAll(async () => {
  await ctx.close();
});

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

function resolve(schema: any): any {
  if (schema?.$ref) return resolve(doc.components.schemas[schema.$ref.split('/').pop()]);
  return schema;
}

/** Every unbounded place in `schema`, as JSON-Pointer-like paths. */
function unbounded(schema: any, at: string, seen: Set<any>, out: string[]): void {
  const s = resolve(schema);
  if (s === undefined || s === null || typeof s !== 'object' || seen.has(s)) return;
  seen.add(s);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) for (const [i, sub] of (s[key] ?? []).entries()) unbounded(sub, `${at}|${key}${i}`, seen, out);
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  const closed = s.enum !== undefined || s.const !== undefined;
  if (types.includes('string') && !closed && s.maxLength === undefined) out.push(`${at}: string without maxLength`);
  if (types.includes('array')) {
    if (s.maxItems === undefined && s.prefixItems === undefined) out.push(`${at}: array without maxItems`);
    unbounded(s.items, `${at}/*`, seen, out);
  }
  if (types.includes('object')) {
    const open = s.additionalProperties !== false && s.additionalProperties !== undefined ? s.additionalProperties : undefined;
    if (open !== undefined && s.maxProperties === undefined) out.push(`${at}: open object without maxProperties`);
    if (open !== undefined && typeof open === 'object') unbounded(open, `${at}/*`, seen, out);
    if (s.propertyNames !== undefined) unbounded(s.propertyNames, `${at}/<name>`, seen, out);
    else if (open !== undefined) out.push(`${at}: open object without bounded propertyNames`);
    for (const [name, sub] of Object.entries(s.properties ?? {})) unbounded(sub, `${at}/${name}`, seen, out);
  }
}

describe('request bounds', () => {
  it('every string, array and open object a route accepts has a maximum', () => {
    const out: string[] = [];
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      for (const m of METHODS) {
        const op = item[m];
        if (!op) continue;
        for (const param of op.parameters ?? []) unbounded(param.schema, `${m.toUpperCase()} ${p} ${param.in}:${param.name}`, new Set(), out);
        for (const [type, media] of Object.entries<any>(op.requestBody?.content ?? {})) unbounded(media.schema, `${m.toUpperCase()} ${p} body(${type})`, new Set(), out);
      }
    }
    expect(out).toEqual([]);
  });
});
