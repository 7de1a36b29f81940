/**
 * The official schemas an export is preflighted against (interface-spec "What the service does"
 * 6: validation-profile status). Each profile names the files it loads from ./schemas/, each
 * pinned by SHA-256: a vendored file that no longer matches its pin is refused at load time,
 * so a validation receipt's schema_digest always names exactly the bytes that judged the export.
 *
 * Validators are compiled on first use and cached; the OSCAL complete schema takes about a
 * second to compile, which only the first validation run pays.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { canonicalize } from '../../shared/canonical-json.ts';
import { sha256Hex } from '../../shared/hash.ts';

export const EXPORT_KINDS = ['oscal', 'data-catalog', 'ai-acquisition', 'records'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];

export interface SchemaFile {
  /** Path under companion/exports/schemas/. */
  path: string;
  sha256: string;
}

export interface SchemaProfile {
  key: string;
  title: string;
  /** The export this profile judges. */
  exportKind: ExportKind;
  /** The document builder that produces what this profile validates (exports/*.ts). */
  adapterKey: string;
  draft: 'draft-04' | 'draft-07';
  /** The schema compiled as the entry point; the others are registered for $ref resolution. */
  entry: SchemaFile;
  references: SchemaFile[];
  licence: { name: string; file: string };
  source: string;
}

const SCHEMA_DIR = new URL('./schemas/', import.meta.url);

export const SCHEMA_PROFILES: readonly SchemaProfile[] = [
  {
    key: 'oscal-1.2.1-complete',
    title: 'NIST OSCAL 1.2.1 complete JSON Schema (assessment-results model)',
    exportKind: 'oscal',
    adapterKey: 'oscal-assessment-results',
    draft: 'draft-07',
    entry: { path: 'oscal-1.2.1/oscal_complete_schema.json', sha256: 'f53c67f5f64cc49c9b3512834d2baa2f8da841cf2cc0c361e6d77ecce0f3d077' },
    references: [],
    licence: { name: 'NIST work: public domain in the US, CC0 1.0 worldwide', file: 'oscal-1.2.1/LICENSE-NIST.md' },
    source: 'NIST OSCAL v1.2.1 release schema, via oscal-compass/compliance-trestle@0e354a512f14af74685dc33d51bf519367871765 release-schemas/',
  },
  {
    key: 'dcat-us-1.1-catalog',
    title: 'DCAT-US 1.1 (Project Open Data v1.1) federal catalog JSON Schema',
    exportKind: 'data-catalog',
    adapterKey: 'dcat-us-catalog',
    draft: 'draft-04',
    entry: { path: 'dcat-us-1.1/catalog.json', sha256: '3e5a23ae36361ba36163e1a522f094fb8b39532731e741553f48dbcd4ddaf0d6' },
    references: [
      { path: 'dcat-us-1.1/dataset.json', sha256: '33cc53d1cc144e52606c534ac2d2c3105c0841943b3e8afc39e00810c618c83b' },
      { path: 'dcat-us-1.1/distribution.json', sha256: 'cd1905495b0576855840c12e6a5138ae2952cf9b7bee56ad20df15da841a3774' },
      { path: 'dcat-us-1.1/organization.json', sha256: '4ce4f6bb576870f79396f35e713ff3ff55a0e734d2a33b0d7ddf1324bafb4619' },
      { path: 'dcat-us-1.1/vcard.json', sha256: 'b16075a8aeed2ca512281aeb16b7f3726dd89de25597c56731a67a106235c4b9' },
    ],
    licence: { name: 'US Government work, CC0 1.0', file: 'dcat-us-1.1/LICENSE.md' },
    source: 'project-open-data/project-open-data.github.io@f136070aa9fea595277f6ebd1cd66f57ff504dfd v1.1/schema/',
  },
];

export function findProfile(key: string): SchemaProfile | undefined {
  return SCHEMA_PROFILES.find((p) => p.key === key);
}

/** The default profile of an export kind; ai-acquisition and records have no official schema. */
export function defaultProfileFor(kind: ExportKind): SchemaProfile | undefined {
  return SCHEMA_PROFILES.find((p) => p.exportKind === kind);
}

export function profileFiles(profile: SchemaProfile): SchemaFile[] {
  return [profile.entry, ...profile.references];
}

/**
 * One digest for the whole profile: SHA-256 of the JCS bytes of {path: sha256} over its
 * files, so a receipt names every byte that took part in the judgement.
 */
export function profileDigest(profile: SchemaProfile): string {
  return sha256Hex(canonicalize(Object.fromEntries(profileFiles(profile).map((f) => [f.path, f.sha256]))));
}

export class SchemaPinError extends Error {}

/** Reads a vendored file and refuses it unless it matches its pin. */
export function readPinned(file: SchemaFile): { text: string; bytes: number } {
  const buf = readFileSync(new URL(file.path, SCHEMA_DIR));
  const actual = createHash('sha256').update(buf).digest('hex');
  if (actual !== file.sha256) {
    throw new SchemaPinError(`schema ${file.path}: expected SHA-256 ${file.sha256}, got ${actual}`);
  }
  return { text: buf.toString('utf8'), bytes: buf.length };
}

export function loadSchema(file: SchemaFile): Record<string, unknown> {
  return JSON.parse(readPinned(file).text) as Record<string, unknown>;
}

export interface SchemaViolation {
  /** RFC 6901 JSON Pointer into the validated document. */
  path: string;
  message: string;
  keyword: string;
}

export interface SchemaValidation {
  valid: boolean;
  errors: SchemaViolation[];
}

const compiled = new Map<string, ValidateFunction>();

function compile(profile: SchemaProfile): ValidateFunction {
  const cached = compiled.get(profile.key);
  if (cached) return cached;
  // strict:false: NIST's and GSA's schemas carry keywords ajv's strict mode rejects ($comment
  // placement, unknown formats). unicodeRegExp:false: vcard.json's hasEmail pattern uses escapes
  // that are invalid under the `u` flag (see schemas/dcat-us-1.1/README.md).
  const options = { strict: false, allErrors: true, unicodeRegExp: profile.draft !== 'draft-04' };
  const ajv = profile.draft === 'draft-04' ? new AjvDraft04(options) : new Ajv(options);
  addFormats.default(ajv);
  for (const ref of profile.references) ajv.addSchema(loadSchema(ref));
  const validate = ajv.compile(loadSchema(profile.entry));
  compiled.set(profile.key, validate);
  return validate;
}

export function validateAgainst(profile: SchemaProfile, document: unknown): SchemaValidation {
  const validate = compile(profile);
  const valid = validate(document) === true;
  return { valid, errors: valid ? [] : (validate.errors ?? []).map(toViolation) };
}

function toViolation(e: ErrorObject): SchemaViolation {
  const detail = e.keyword === 'required' || e.keyword === 'additionalProperties' ? ` (${JSON.stringify(e.params)})` : '';
  return { path: e.instancePath, message: `${e.message ?? e.keyword}${detail}`, keyword: e.keyword };
}
