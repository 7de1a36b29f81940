/**
 * Requests made from an OpenAPI 3.1 description: every operation with its path and query
 * parameters filled, and a minimal body valid against the operation's JSON Schema (the
 * schema's example where it has one, else required properties only, enum and const values,
 * strings matching their pattern and format). Values the service itself handed out (an
 * action_key, a run_key) replace the generated ones by name, so the operation reaches real
 * state instead of a 404.
 */
import fc from 'fast-check';

export const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

export interface Operation {
  method: (typeof METHODS)[number];
  path: string;
  op: any;
}

export function operations(doc: any): Operation[] {
  const out: Operation[] = [];
  for (const [p, item] of Object.entries<any>(doc.paths)) {
    for (const method of METHODS) if (item[method]) out.push({ method, path: p, op: item[method] });
  }
  return out;
}

/** Real values by parameter or property name; a function is asked each time (state changes). */
export type Known = Record<string, unknown | (() => unknown)>;

function known(values: Known, name: string): unknown {
  const v = values[name];
  return typeof v === 'function' ? (v as () => unknown)() : v;
}

function resolve(doc: any, schema: any): any {
  let s = schema;
  for (let i = 0; s && typeof s.$ref === 'string' && i < 20; i++) {
    const ref: string = s.$ref;
    if (!ref.startsWith('#/')) throw new Error(`external $ref ${ref}`);
    s = ref
      .slice(2)
      .split('/')
      .reduce((node: any, key) => node?.[key.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
  }
  return s ?? {};
}

function sampleString(schema: any): string {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? Infinity;
  const fits = (v: string) => v.length >= min && v.length <= max && (!schema.pattern || new RegExp(schema.pattern, 'u').test(v));
  const byFormat: Record<string, string> = {
    'date-time': new Date().toISOString(),
    date: new Date().toISOString().slice(0, 10),
    email: 'smoke@example.com',
    uri: 'https://example.com/smoke',
    url: 'https://example.com/smoke',
    uuid: '00000000-0000-4000-8000-000000000000',
  };
  const candidates = [byFormat[schema.format as string], 'smoke-test', 'smoke', 'a', 'x'.repeat(Math.max(min, 1))].filter((v): v is string => v !== undefined);
  const plain = candidates.find(fits);
  if (plain !== undefined) return plain;
  if (schema.pattern) {
    const samples = fc.sample(fc.stringMatching(new RegExp(schema.pattern, 'u')), { numRuns: 50, seed: 32 }).filter(fits);
    if (samples.length > 0) return samples.sort((a, b) => a.length - b.length)[0]!;
  }
  throw new Error(`no sample string for ${JSON.stringify(schema)}`);
}

/** A minimal value valid against `schema`; `values` replace properties of the same name. */
export function sample(doc: any, schemaIn: any, values: Known = {}, depth = 0): unknown {
  const schema = resolve(doc, schemaIn);
  if (depth > 12) return undefined;
  if ('example' in schema) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum.find((v: unknown) => v !== null) ?? schema.enum[0];
  if ('default' in schema && schema.default !== undefined) return schema.default;
  const branches = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(branches)) return sample(doc, branches[0], values, depth + 1);
  if (Array.isArray(schema.allOf)) {
    return Object.assign({}, ...schema.allOf.map((s: any) => sample(doc, s, values, depth + 1)));
  }
  const type = Array.isArray(schema.type) ? (schema.type.find((t: string) => t !== 'null') ?? 'null') : schema.type;
  switch (type ?? (schema.properties ? 'object' : undefined)) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const name of schema.required ?? []) {
        const real = known(values, name);
        out[name] = real !== undefined ? real : sample(doc, schema.properties?.[name] ?? {}, values, depth + 1);
      }
      // An optional property the service handed out a real value for is sent too: it names
      // real state (an action_key beside a dispatch_key that is required "unless action_key").
      for (const name of Object.keys(schema.properties ?? {})) {
        const real = known(values, name);
        if (!(name in out) && real !== undefined) out[name] = real;
      }
      return out;
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => sample(doc, schema.items ?? {}, values, depth + 1));
    case 'string':
      return sampleString(schema);
    case 'integer':
    case 'number':
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return {};
  }
}

export interface BuiltRequest {
  url: string;
  init: RequestInit;
}

/**
 * The request for `operation`: path parameters from `values` (else sampled), required query
 * parameters likewise, and a body of the first media type it accepts.
 */
export function buildRequest(doc: any, base: string, { method, path, op }: Operation, values: Known): BuiltRequest {
  let p = path;
  const query = new URLSearchParams();
  for (const param of op.parameters ?? []) {
    const real = known(values, param.name);
    if (param.in === 'path') {
      const v = real !== undefined ? real : sample(doc, param.schema ?? {}, values);
      p = p.replace(`{${param.name}}`, encodeURIComponent(String(v)));
    } else if (param.in === 'query' && param.required) {
      query.set(param.name, String(real !== undefined ? real : sample(doc, param.schema ?? {}, values)));
    }
  }
  const headers: Record<string, string> = {};
  let body: string | undefined;
  const content = op.requestBody?.content as Record<string, any> | undefined;
  if (content) {
    const [type, media] = Object.entries(content)[0]!;
    const value = sample(doc, media.schema ?? {}, values);
    headers['content-type'] = type;
    if (type === 'application/x-www-form-urlencoded') {
      body = new URLSearchParams(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString();
    } else {
      body = JSON.stringify(value);
    }
  }
  const qs = query.toString();
  return { url: `${base}${p}${qs ? `?${qs}` : ''}`, init: { method: method.toUpperCase(), headers, ...(body !== undefined ? { body } : {}) } };
}
