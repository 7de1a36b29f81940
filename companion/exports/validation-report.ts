/**
 * GET /tenant/exports/validation-report: for each document export, which pinned profile judges
 * it, whether it validates right now, whether a stored receipt covers the current bytes, and
 * the blocking gaps that stand between the tenant and a document an auditor can accept.
 * Nothing is stored by reading the report.
 */
import { catalogConfig } from '../core/config.ts';
import type { DocumentContext, DocumentKind } from './documents.ts';
import { DOCUMENT_KINDS, buildDocument, exportDigest } from './documents.ts';
import { missingCatalogSettings } from './data-catalog.ts';
import { OWNER_REVIEW_NOTICE } from './notice.ts';
import { defaultProfileFor, findProfile, profileDigest, validateAgainst } from './schema-profiles.ts';
import { runView } from './validation.ts';

export interface ReportGap {
  code: string;
  export_kind: DocumentKind;
  blocking: boolean;
  detail: string;
}

export async function validationReport(ctx: DocumentContext): Promise<Record<string, unknown>> {
  const gaps: ReportGap[] = [];
  const exports: Record<string, unknown>[] = [];
  for (const kind of DOCUMENT_KINDS) exports.push(await exportStatus(ctx, kind, gaps));
  return {
    notice: OWNER_REVIEW_NOTICE,
    tenant_id: ctx.tenantId,
    exports,
    records: { export_kind: 'records', status: 'no_official_schema', detail: 'Each exported record is judged by its own seal: verify it offline (svc-verify) against the published keys.' },
    blocking_gaps: gaps.filter((g) => g.blocking),
    other_gaps: gaps.filter((g) => !g.blocking),
  };
}

/** One document export's entry in the report; its gaps are added to `gaps`. */
async function exportStatus(ctx: DocumentContext, kind: DocumentKind, gaps: ReportGap[]): Promise<Record<string, unknown>> {
  const document = await buildDocument(kind, ctx);
  const digest = exportDigest(document);
  const latest = (await ctx.deps.store.exports.listRuns(ctx.tenantId, { exportKind: kind }, 1))[0];
  const fallback = defaultProfileFor(kind);

  if (!fallback) {
    // ai-acquisition: no official schema exists for an M-25-22 read model; its gaps are its own.
    for (const g of (document.blocking_gaps as { code: string; detail: string }[] | undefined) ?? []) {
      gaps.push({ code: g.code, export_kind: kind, blocking: true, detail: g.detail });
    }
    return { export_kind: kind, status: 'no_official_schema', schema_profile_key: null, export_digest: digest, latest_run: latest ? runView(latest) : null };
  }

  const binding = await ctx.deps.store.exports.activeBinding(ctx.tenantId, kind, fallback.adapterKey);
  const profile = (binding && findProfile(binding.schemaProfileKey)) || fallback;
  const schemaDigest = profileDigest(profile);
  const now = validateAgainst(profile, document);
  const receiptCurrent = latest !== undefined && latest.exportDigest === digest && latest.schemaDigest === schemaDigest;
  const status = !now.valid ? 'invalid' : !latest ? 'not_run' : !receiptCurrent ? 'stale' : latest.validationStatus;

  if (kind === 'data-catalog') {
    const missing = missingCatalogSettings(catalogConfig(ctx.deps.config));
    if (missing.length > 0) {
      gaps.push({ code: 'catalog_settings_missing', export_kind: kind, blocking: true, detail: `The federal DCAT-US schema requires values only the operator knows; set ${missing.join(', ')}. Until then the catalog does not declare conformsTo DCAT-US 1.1.` });
    }
  }
  if (!now.valid) {
    gaps.push({ code: 'schema_invalid', export_kind: kind, blocking: true, detail: `The current export fails ${profile.key} with ${now.errors.length} errors.` });
  } else if (!receiptCurrent) {
    gaps.push({ code: 'no_receipt_for_current_export', export_kind: kind, blocking: false, detail: 'No validation run has judged the current export; POST /tenant/exports/validation-runs stores a receipt.' });
  }
  return {
    export_kind: kind,
    status,
    schema_profile_key: profile.key,
    schema_digest: schemaDigest,
    binding_key: binding?.bindingKey ?? null,
    export_digest: digest,
    preflight_now: { valid: now.valid, error_count: now.errors.length, errors: now.errors.slice(0, 10) },
    latest_run: latest ? runView(latest) : null,
  };
}
