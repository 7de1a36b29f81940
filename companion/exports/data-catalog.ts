/**
 * GET /tenant/exports/data-catalog: the tenant's evidence datasets as a DCAT-US 1.1 (Project
 * Open Data v1.1) catalog, valid against the official federal schema (schemas/dcat-us-1.1/,
 * profile dcat-us-1.1-catalog). Three datasets: the sealed records export, the offline seal
 * bundles, and the hourly roll-up epochs with their inclusion proofs.
 *
 * The federal schema requires bureauCode, programCode and a contact point, which only the
 * operator knows (SVC_CATALOG_* settings, core/config.ts). They are never invented. With all
 * four set the catalog declares conformsTo DCAT-US 1.1 and validates against it. With any unset
 * the fields are left out and so is the claim: conformsTo names the schema a catalog follows
 * (DCAT-US 1.1 "conformsTo", required, one allowed value), and a document that fails the
 * schema must not say it follows it. `dcat_us_conformance` then names the missing settings, and
 * the validation report lists them as a blocking gap (validation-report.ts).
 *
 * accessLevel is "non-public": tenant evidence is behind the tenant's key; the catalog itself
 * is for owner review (interface-spec What the service does 6).
 */
import type { CatalogConfig } from '../core/config.ts';
import type { ExportInputs } from './inputs.ts';
import { asOf } from './inputs.ts';
import { OWNER_REVIEW_NOTICE } from './notice.ts';

export const DCAT_US_CONFORMS_TO = 'https://project-open-data.cio.gov/v1.1/schema';

type Json = Record<string, unknown>;

/** Which catalog settings are missing; each is a blocking gap for the official schema. */
export function missingCatalogSettings(c: CatalogConfig): string[] {
  return [
    ...(c.bureauCode === null ? ['SVC_CATALOG_BUREAU_CODE'] : []),
    ...(c.programCode === null ? ['SVC_CATALOG_PROGRAM_CODE'] : []),
    ...(c.contactName === null ? ['SVC_CATALOG_CONTACT_NAME'] : []),
    ...(c.contactEmail === null ? ['SVC_CATALOG_CONTACT_EMAIL'] : []),
  ];
}

/** `origin` is the service's public origin (e.g. https://gate.example.org); DCAT-US URLs are absolute. */
export function dataCatalog(inputs: ExportInputs, settings: CatalogConfig, origin: string): Json {
  const { coverage, tenantId } = inputs;
  const modified = asOf(inputs);
  const url = (path: string) => new URL(path, origin).toString();
  const temporal = coverage.first_recorded_at ? { temporal: `${coverage.first_recorded_at}/${modified}` } : {};
  const anchored = coverage.packs.reduce((n, p) => n + p.anchoring.anchored, 0);
  const common: Json = {
    '@type': 'dcat:Dataset',
    ...(settings.bureauCode ? { bureauCode: [settings.bureauCode] } : {}),
    ...(settings.programCode ? { programCode: [settings.programCode] } : {}),
    modified,
    publisher: { '@type': 'org:Organization', name: inputs.tenantName },
    ...(settings.contactName && settings.contactEmail
      ? { contactPoint: { '@type': 'vcard:Contact', fn: settings.contactName, hasEmail: `mailto:${settings.contactEmail}` } }
      : {}),
    accessLevel: 'non-public',
    rights: `Tenant evidence, readable only with the tenant's API key. ${OWNER_REVIEW_NOTICE}`,
    accrualPeriodicity: 'irregular',
    ...temporal,
  };

  const datasets: Json[] = [
    {
      ...common,
      identifier: `${tenantId}/sealed-records`,
      title: 'Sealed evidence records',
      description: `${coverage.records} sealed records (gate decisions, review receipts, policy receipts and duty-event records), each with its Ed25519 seal and a ready verify request; verifiable offline. Hash commitments only: no prompt or document text.`,
      keyword: ['ai governance', 'evidence', 'audit', 'ed25519', 'sealed records'],
      distribution: [
        {
          '@type': 'dcat:Distribution',
          title: 'Records export (NDJSON, one record per line)',
          accessURL: url('/tenant/exports/records'),
          mediaType: 'application/x-ndjson',
          format: 'NDJSON',
        },
        {
          '@type': 'dcat:Distribution',
          title: 'Per-pack coverage summary',
          accessURL: url('/tenant/exports/records/summary'),
          mediaType: 'application/json',
          format: 'JSON',
        },
      ],
      references: [url('/v1/verify/kit'), url('/.well-known/service-keys.json')],
    },
    {
      ...common,
      identifier: `${tenantId}/seal-bundles`,
      title: 'Offline seal bundles',
      description: 'Four-file seal bundles (payload, attestation, signature, recipe) per record, re-derived on request from stored receipts; each verifies with sha256sum and openssl alone.',
      keyword: ['evidence', 'offline verification', 'seal bundle'],
      distribution: [
        {
          '@type': 'dcat:Distribution',
          title: 'Batch seal bundles (POST with action_keys)',
          accessURL: url('/evidence-packets/seal-bundle/batch'),
          mediaType: 'application/json',
          format: 'JSON',
        },
      ],
      references: [url('/evidence-packets/proof-kit')],
    },
    {
      ...common,
      identifier: `${tenantId}/roll-up-epochs`,
      title: 'Hourly roll-up epochs and inclusion proofs',
      description: `RFC 9162 Merkle inclusion proofs of each record into the tenant log and the signed hourly epoch. ${anchored} of ${coverage.records} records are anchored in a closed epoch so far.`,
      keyword: ['merkle tree', 'rfc 9162', 'inclusion proof', 'transparency log'],
      distribution: [
        {
          '@type': 'dcat:Distribution',
          title: 'Inclusion proof of one record (GET /v1/records/{action_key}/inclusion-proof)',
          accessURL: url('/v1/records/'),
          mediaType: 'application/json',
          format: 'JSON',
        },
      ],
    },
  ];

  const missing = missingCatalogSettings(settings);
  return {
    // The catalog schema requires @context whenever @type is present (JSON-LD, catalog.jsonld).
    '@context': 'https://project-open-data.cio.gov/v1.1/schema/catalog.jsonld',
    '@type': 'dcat:Catalog',
    ...(missing.length === 0
      ? { conformsTo: DCAT_US_CONFORMS_TO, describedBy: DCAT_US_DESCRIBED_BY }
      : { dcat_us_conformance: notConforming(missing) }),
    dataset: datasets,
  };
}

const DCAT_US_DESCRIBED_BY = 'https://project-open-data.cio.gov/v1.1/schema/catalog.json';

/** Which DCAT-US 1.1 field each catalog setting fills. */
const FIELD_OF_SETTING: Record<string, string> = {
  SVC_CATALOG_BUREAU_CODE: 'bureauCode',
  SVC_CATALOG_PROGRAM_CODE: 'programCode',
  SVC_CATALOG_CONTACT_NAME: 'contactPoint.fn',
  SVC_CATALOG_CONTACT_EMAIL: 'contactPoint.hasEmail',
};

/** Stands in for conformsTo when the catalog cannot meet the schema: what is missing, and why. */
function notConforming(missing: string[]): Json {
  return {
    claimed: false,
    standard: DCAT_US_CONFORMS_TO,
    missing_settings: missing,
    detail: `Not a DCAT-US 1.1 catalog yet: the federal schema requires ${missing.map((m) => FIELD_OF_SETTING[m]).join(', ')}, which only the operator knows; set ${missing.join(', ')} and restart.`,
  };
}
