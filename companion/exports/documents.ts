/**
 * The document exports by kind, built from one gathering of the tenant's evidence: what the
 * GET endpoints return and what a validation run judges, so the two are always the same bytes.
 * export_digest = SHA-256 hex of the document's JCS bytes (RFC 8785; DESIGN.md §3).
 */
import { catalogConfig } from '../core/config.ts';
import { canonicalize } from '../../shared/canonical-json.ts';
import { sha256Hex } from '../../shared/hash.ts';
import type { AppDeps } from '../core/app-deps.ts';
import { aiAcquisition } from './ai-acquisition.ts';
import { dataCatalog } from './data-catalog.ts';
import { gatherInputs } from './inputs.ts';
import { oscalAssessmentResults } from './oscal.ts';

export const DOCUMENT_KINDS = ['oscal', 'data-catalog', 'ai-acquisition'] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];

export interface DocumentContext {
  deps: AppDeps;
  tenantId: string;
  /** The service's public origin, for the absolute URLs DCAT-US requires. */
  origin: string;
}

export async function buildDocument(kind: DocumentKind, ctx: DocumentContext): Promise<Record<string, unknown>> {
  const inputs = await gatherInputs(ctx.deps, ctx.tenantId);
  switch (kind) {
    case 'oscal':
      return oscalAssessmentResults(inputs);
    case 'data-catalog':
      return dataCatalog(inputs, catalogConfig(ctx.deps.config), ctx.origin);
    case 'ai-acquisition':
      return aiAcquisition(inputs, ctx.deps.store.policy, { passedKinds: await passedKinds(ctx) });
  }
}

export function exportDigest(document: unknown): string {
  return sha256Hex(canonicalize(document));
}

/** Export kinds whose newest validation run passed. */
async function passedKinds(ctx: DocumentContext): Promise<string[]> {
  const passed: string[] = [];
  for (const kind of DOCUMENT_KINDS) {
    if ((await ctx.deps.store.exports.listRuns(ctx.tenantId, { exportKind: kind }, 1))[0]?.validationStatus === 'passed') passed.push(kind);
  }
  return passed;
}
