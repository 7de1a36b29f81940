/**
 * The document exports and their validation against the official schemas, with the real app
 * and a real SQLite file. The OSCAL and DCAT-US documents are checked here by an ajv instance
 * of the test's own (not the service's validator), with the official examples as positive
 * controls and a removed required member as the negative control.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalize } from '../../shared/canonical-json.ts';
import { SCHEMA_PROFILES, profileFiles } from '../../companion/exports/schema-profiles.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { gateBody, recordBody } from './pack-fixtures.ts';

const SCHEMAS = path.join(REPO_ROOT, 'companion/exports/schemas');
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));

function oscalValidator() {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  return ajv.compile(readJson(path.join(SCHEMAS, 'oscal-1.2.1/oscal_complete_schema.json')));
}

function dcatValidator() {
  // vcard.json's hasEmail pattern is invalid under the JavaScript u flag (schemas README).
  const ajv = new AjvDraft04({ strict: false, allErrors: true, unicodeRegExp: false });
  addFormats.default(ajv);
  for (const f of ['dataset', 'distribution', 'organization', 'vcard']) ajv.addSchema(readJson(path.join(SCHEMAS, `dcat-us-1.1/${f}.json`)));
  return ajv.compile(readJson(path.join(SCHEMAS, 'dcat-us-1.1/catalog.json')));
}

const CATALOG_ENV = {
  SVC_CATALOG_BUREAU_CODE: '015:11',
  SVC_CATALOG_PROGRAM_CODE: '015:001',
  SVC_CATALOG_CONTACT_NAME: 'Evidence Desk',
  SVC_CATALOG_CONTACT_EMAIL: 'evidence@example.gov',
};

let ctx: TestContext;
let key: string;

async function seedEvidence(k: string): Promise<void> {
  expect((await ctx.request('/v1/record/batch', { json: [recordBody(), recordBody()], key: k })).status).toBe(201);
  const gate = await ctx.request('/v1/gate', { json: gateBody('law'), key: k });
  expect(gate.status).toBe(201);
  expect((await ctx.request('/v1/gate', { json: gateBody('defense'), key: k })).status).toBe(201);
}

beforeEach(async () => {
  ctx = await createTestContext({ env: CATALOG_ENV });
  key = ctx.productionTenant().apiKey;
  await seedEvidence(key);
});
afterEach(async () => {
  await ctx.close();
});

describe('document exports', () => {
  it('OSCAL: an assessment-results document that validates against NIST oscal_complete_schema.json, and fails without a required member', async () => {
    const validate = oscalValidator();
    expect(validate(readJson(path.join(REPO_ROOT, 'test/vectors/oscal/ifa_assessment-results-example.json')))).toBe(true);

    const res = await ctx.request('/tenant/exports/oscal', { key });
    expect(res.status).toBe(200);
    expect(validate(res.body), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
    const ar = res.body['assessment-results'];
    expect(ar.metadata['oscal-version']).toBe('1.2.1');
    expect(ar.metadata.remarks).toMatch(/not an authorization decision/);
    const result = ar.results[0];
    const law = result.observations.find((o: any) => o.title === 'law evidence');
    const packet = law['relevant-evidence'].find((e: any) => e.href.startsWith('/law/evidence-packets/law:'));
    expect((await ctx.request(packet.href, { key })).status).toBe(200);
    expect(result.findings.map((f: any) => f.target['target-id'])).toContain('medicine-evidence-coverage');
    expect(result.findings.find((f: any) => f.target['target-id'] === 'medicine-evidence-coverage').target.status.state).toBe('not-satisfied');

    // The same evidence exports to the same bytes.
    expect((await ctx.request('/tenant/exports/oscal', { key })).text).toBe(res.text);

    for (const remove of [(d: any) => delete d['assessment-results']['import-ap'], (d: any) => delete d['assessment-results'].results[0].observations[0].collected]) {
      const broken = structuredClone(res.body);
      remove(broken);
      expect(validate(broken)).toBe(false);
      expect(validate.errors!.some((e) => e.keyword === 'required')).toBe(true);
    }
  });

  it('DCAT-US: a catalog of the evidence datasets that validates against the official 1.1 schema, and fails without bureauCode', async () => {
    const validate = dcatValidator();
    expect(validate(readJson(path.join(REPO_ROOT, 'test/vectors/dcat-us/catalog-sample.json')))).toBe(true);

    const res = await ctx.request('/tenant/exports/data-catalog', { key });
    expect(res.status).toBe(200);
    expect(validate(res.body), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
    expect(res.body.dataset.map((d: any) => d.title)).toEqual(['Sealed evidence records', 'Offline seal bundles', 'Hourly roll-up epochs and inclusion proofs']);
    expect(res.body.dataset[0].rights).toMatch(/owner review/);
    expect(res.body.dataset[0].contactPoint.hasEmail).toBe('mailto:evidence@example.gov');
    expect(res.body.conformsTo).toBe('https://project-open-data.cio.gov/v1.1/schema');
    expect(res.body.dcat_us_conformance).toBeUndefined();

    const broken = structuredClone(res.body);
    delete broken.dataset[1].bureauCode;
    expect(validate(broken)).toBe(false);
    expect(validate.errors!.map((e) => e.params)).toContainEqual({ missingProperty: 'bureauCode' });
  });

  it('DCAT-US: without the operator settings the catalog does not claim conformance and names exactly the missing settings', async () => {
    const validate = dcatValidator();
    const all = Object.keys(CATALOG_ENV);
    for (const [env, missing] of [
      [{}, all],
      [{ SVC_CATALOG_BUREAU_CODE: '015:11', SVC_CATALOG_PROGRAM_CODE: '015:001' }, ['SVC_CATALOG_CONTACT_NAME', 'SVC_CATALOG_CONTACT_EMAIL']],
      [{ ...CATALOG_ENV, SVC_CATALOG_CONTACT_EMAIL: undefined }, ['SVC_CATALOG_CONTACT_EMAIL']],
    ] as const) {
      const partial = await createTestContext({ env: Object.fromEntries(Object.entries(env).filter((e) => e[1] !== undefined)) as Record<string, string> });
      try {
        const res = await partial.request('/tenant/exports/data-catalog', { key: partial.productionTenant().apiKey });
        expect(res.status).toBe(200);
        // Such a document fails the federal schema, so it must not say it follows it.
        expect(validate(res.body)).toBe(false);
        expect(res.body).not.toHaveProperty('conformsTo');
        expect(res.body).not.toHaveProperty('describedBy');
        expect(res.body.dcat_us_conformance).toMatchObject({ claimed: false, standard: 'https://project-open-data.cio.gov/v1.1/schema', missing_settings: missing });
        for (const m of missing) expect(res.body.dcat_us_conformance.detail).toContain(m);
        expect(res.body.dataset).toHaveLength(3);
      } finally {
        await partial.close();
      }
    }
  });

  it('AI acquisition: maps packs, policy, routes, boundaries and coverage to M-25-22 and names blocking gaps', async () => {
    const res = await ctx.request('/tenant/exports/ai-acquisition', { key });
    expect(res.status).toBe(200);
    expect(res.body.notice).toMatch(/not an authorization decision/);
    expect(res.body.memorandum).toMatchObject({ id: 'M-25-22', replaces: 'M-24-18' });
    const q = Object.fromEntries(res.body.questions.map((x: any) => [x.id, x]));
    expect(q['performance-monitoring'].status).toBe('evidenced');
    expect(q['production-evidence'].status).toBe('evidenced');
    expect(q['model-documentation'].status).toBe('outside_service_scope');
    const codes = res.body.blocking_gaps.map((g: any) => g.code);
    expect(codes).toContain('supplier_model_documentation');
    expect(codes).not.toContain('sandbox_evidence');
    expect(res.body.packs.find((p: any) => p.pack === 'law').review_routes.length).toBeGreaterThan(0);

    // A sandbox tenant's evidence is never production evidence: a blocking gap.
    const sandbox = await ctx.signup();
    const s = await ctx.request('/tenant/exports/ai-acquisition', { key: sandbox.apiKey });
    expect(s.body.blocking_gaps.map((g: any) => g.code)).toEqual(expect.arrayContaining(['sandbox_evidence', 'no_sealed_evidence']));
  });

  it('every export rejects unknown query parameters and needs a key', async () => {
    for (const p of ['oscal', 'data-catalog', 'ai-acquisition', 'validation-report', 'validation-schema-profiles', 'validation-schema-manifest']) {
      expect((await ctx.request(`/tenant/exports/${p}?format=xml`, { key })).status, p).toBe(422);
      expect((await ctx.request(`/tenant/exports/${p}`)).status, p).toBe(401);
    }
  });
});

describe('validation profiles, bindings and runs', () => {
  const count = async (table: string) => (await ctx.sql<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))[0]!.n;

  it('ships every vendored schema pinned by SHA-256, with its licence; the manifest re-reads the files', async () => {
    for (const p of SCHEMA_PROFILES) {
      for (const f of profileFiles(p)) {
        expect(createHash('sha256').update(fs.readFileSync(path.join(SCHEMAS, f.path))).digest('hex'), f.path).toBe(f.sha256);
      }
      expect(fs.existsSync(path.join(SCHEMAS, p.licence.file))).toBe(true);
    }
    const manifest = await ctx.request('/tenant/exports/validation-schema-manifest', { key });
    expect(manifest.body.files).toHaveLength(6);
    const list = await ctx.request('/tenant/exports/validation-schema-profiles', { key });
    expect(list.body.profiles.map((p: any) => p.schema_profile_key)).toEqual(['oscal-1.2.1-complete', 'dcat-us-1.1-catalog']);
    const one = await ctx.request('/tenant/exports/validation-schema-profiles/dcat-us-1.1-catalog?include_schema=true', { key });
    expect(Object.keys(one.body.schemas)).toHaveLength(5);
    expect((await ctx.request('/tenant/exports/validation-schema-profiles/dcat-us-1.1-catalog', { key })).body.schemas).toBeUndefined();
    expect((await ctx.request('/tenant/exports/validation-schema-profiles/nope', { key })).status).toBe(404);
  });

  it('previews a binding without storing it, records one that supersedes the last, lists by kind, adapter and active_only', async () => {
    const body = { export_kind: 'oscal', schema_profile_key: 'oscal-1.2.1-complete' };
    const preview = await ctx.request('/tenant/exports/validation-schema-bindings/preview', { json: body, key });
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ recorded: false, supersedes: null, binding: { binding_key: null, adapter_key: 'oscal-assessment-results' } });
    expect(await count('validation_schema_bindings')).toBe(0);

    const first = await ctx.request('/tenant/exports/validation-schema-bindings', { json: body, key });
    expect(first.status).toBe(201);
    expect(first.body.binding.binding_digest).toBe(preview.body.binding.binding_digest);
    const second = await ctx.request('/tenant/exports/validation-schema-bindings', { json: { export_kind: 'oscal' }, key });
    expect(second.body.supersedes).toBe(first.body.binding.binding_key);
    await ctx.request('/tenant/exports/validation-schema-bindings', { json: { export_kind: 'data-catalog' }, key });

    const list = async (q: string) => (await ctx.request(`/tenant/exports/validation-schema-bindings${q}`, { key })).body.bindings.map((b: any) => b.binding_key);
    expect(await list('')).toHaveLength(3);
    expect(await list('?export_kind=oscal')).toEqual([second.body.binding.binding_key, first.body.binding.binding_key]);
    expect(await list('?export_kind=oscal&active_only=true')).toEqual([second.body.binding.binding_key]);
    expect(await list('?adapter_key=dcat-us-catalog')).toHaveLength(1);

    for (const [bad, field] of [
      [{ export_kind: 'oscal', schema_profile_key: 'dcat-us-1.1-catalog' }, '/export_kind'],
      [{ export_kind: 'ai-acquisition' }, '/export_kind'],
      [{ export_kind: 'oscal', adapter_key: 'other' }, '/adapter_key'],
      [{ export_kind: 'oscal', schema_profile_key: 'nope' }, '/schema_profile_key'],
      [{ export_kind: 'oscal', extra: 1 }, '/extra'],
    ] as const) {
      const res = await ctx.request('/tenant/exports/validation-schema-bindings', { json: bad, key });
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(res.body.errors.map((e: any) => e.path)).toEqual([field]);
    }
    expect(await count('validation_schema_bindings')).toBe(3);
    expect((await ctx.request('/tenant/exports/validation-schema-bindings?active_only=yes', { key })).status).toBe(422);
  });

  it('runs a local preflight and stores only a hash-only receipt: digests, result, error count; no export content', async () => {
    const doc = await ctx.request('/tenant/exports/oscal', { key });
    const run = await ctx.request('/tenant/exports/validation-runs', { json: { export_kind: 'oscal' }, key });
    expect(run.status).toBe(201);
    expect(run.body.run).toMatchObject({ validation_status: 'passed', error_count: 0, schema_profile_key: 'oscal-1.2.1-complete' });
    expect(run.body.run.export_digest).toBe(createHash('sha256').update(canonicalize(doc.body)).digest('hex'));

    const rows = await ctx.sql('SELECT * FROM validation_runs');
    expect(rows).toHaveLength(1);
    expect(Object.keys(rows[0]!).sort()).toEqual(
      ['adapter_key', 'binding_key', 'created_at', 'error_count', 'export_digest', 'export_kind', 'run_key', 'schema_digest', 'schema_profile_key', 'tenant_id', 'validation_status'].sort(),
    );
    // Nothing of the document reached the database (SQLite: its file or WAL); the receipt did.
    const marker = doc.body['assessment-results'].results[0].uuid as string;
    const stored = await ctx.storedBytes();
    for (const { name, bytes } of stored) expect(bytes.includes(marker), name).toBe(false);
    expect(stored.some(({ bytes }) => bytes.includes(run.body.run.export_digest))).toBe(true);
  });

  it('reports a failing export with its error count and names the missing catalog settings as blocking gaps', async () => {
    const bare = await createTestContext();
    try {
      const k = bare.productionTenant().apiKey;
      const run = await bare.request('/tenant/exports/validation-runs', { json: { export_kind: 'data-catalog' }, key: k });
      expect(run.status).toBe(201);
      expect(run.body.run.validation_status).toBe('failed');
      expect(run.body.run.error_count).toBeGreaterThan(0);
      expect(run.body.errors.map((e: any) => e.message).join(' ')).toMatch(/bureauCode/);
      const report = await bare.request('/tenant/exports/validation-report', { key: k });
      const dcat = report.body.exports.find((e: any) => e.export_kind === 'data-catalog');
      expect(dcat.status).toBe('invalid');
      expect(report.body.blocking_gaps).toEqual(
        expect.arrayContaining([expect.objectContaining({ code: 'catalog_settings_missing', detail: expect.stringContaining('SVC_CATALOG_BUREAU_CODE') })]),
      );
      expect((await bare.request('/tenant/exports/validation-runs', { json: { export_kind: 'records' }, key: k })).status).toBe(422);
    } finally {
      await bare.close();
    }
  });

  it('lists runs with four filters, gives an overview with limit 1-100 (default 50), one run, and a report whose receipts go stale', async () => {
    const binding = (await ctx.request('/tenant/exports/validation-schema-bindings', { json: { export_kind: 'oscal' }, key })).body.binding.binding_key;
    const bound = await ctx.request('/tenant/exports/validation-runs', { json: { export_kind: 'oscal', binding_key: binding }, key });
    expect(bound.body.run.binding_key).toBe(binding);
    await ctx.request('/tenant/exports/validation-runs', { json: { export_kind: 'data-catalog' }, key });
    for (let i = 0; i < 3; i++) await ctx.request('/tenant/exports/validation-runs', { json: { export_kind: 'oscal' }, key });

    const runs = async (q: string) => (await ctx.request(`/tenant/exports/validation-runs${q}`, { key })).body.runs;
    expect(await runs('')).toHaveLength(5);
    expect(await runs('?export_kind=data-catalog')).toHaveLength(1);
    expect(await runs('?adapter_key=oscal-assessment-results')).toHaveLength(4);
    expect((await runs(`?binding_key=${binding}`)).map((r: any) => r.run_key)).toEqual([bound.body.run.run_key]);
    expect(await runs('?validation_status=failed')).toHaveLength(0);
    expect((await ctx.request('/tenant/exports/validation-runs?validation_status=odd', { key })).status).toBe(422);

    const overview = await ctx.request('/tenant/exports/validation-runs/overview', { key });
    expect(overview.body).toMatchObject({ total: 5, passed: 5, failed: 0, limit: 50 });
    expect((await ctx.request('/tenant/exports/validation-runs/overview?limit=2&export_kind=oscal', { key })).body).toMatchObject({ total: 4, limit: 2, runs: [expect.anything(), expect.anything()] });
    for (const bad of ['0', '101', 'x']) expect((await ctx.request(`/tenant/exports/validation-runs/overview?limit=${bad}`, { key })).status).toBe(422);

    const one = await ctx.request(`/tenant/exports/validation-runs/${bound.body.run.run_key}`, { key });
    expect(one.body).toEqual(bound.body.run);
    const other = ctx.productionTenant().apiKey;
    expect((await ctx.request(`/tenant/exports/validation-runs/${bound.body.run.run_key}`, { key: other })).status).toBe(404);

    let report = (await ctx.request('/tenant/exports/validation-report', { key })).body;
    expect(report.exports.find((e: any) => e.export_kind === 'oscal').status).toBe('passed');
    // New evidence changes the export: the stored receipt no longer covers it.
    ctx.clock.advance(1000);
    await ctx.request('/v1/record/batch', { json: [recordBody()], key });
    report = (await ctx.request('/tenant/exports/validation-report', { key })).body;
    expect(report.exports.find((e: any) => e.export_kind === 'oscal').status).toBe('stale');
    expect(report.notice).toMatch(/owner review/);
  });
});
