/**
 * The document exports (interface-spec Tenant exports): OSCAL assessment results, the DCAT-US
 * data catalog, the AI-acquisition read model, and the validation report over them.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../core/router.ts';
import { defineRoute, jsonContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import type { DocumentContext, DocumentKind } from './documents.ts';
import { buildDocument } from './documents.ts';
import { validationReport } from './validation-report.ts';

const Document = (name: string) => z.record(z.string(), z.unknown()).openapi(name);

const DOCUMENTS: { kind: DocumentKind; path: string; operationId: string; schema: string; summary: string }[] = [
  {
    kind: 'oscal',
    path: '/tenant/exports/oscal',
    operationId: 'getOscalExport',
    schema: 'OscalAssessmentResults',
    summary: 'OSCAL 1.2.1 assessment results built from the evidence (observations link evidence packets; a finding per pack)',
  },
  { kind: 'data-catalog', path: '/tenant/exports/data-catalog', operationId: 'getDataCatalogExport', schema: 'DcatUsCatalog', summary: 'DCAT-US 1.1 catalog of the evidence datasets: records export, seal bundles, epochs' },
  {
    kind: 'ai-acquisition',
    path: '/tenant/exports/ai-acquisition',
    operationId: 'getAiAcquisitionExport',
    schema: 'AiAcquisitionReadModel',
    summary: 'Packs, policy, review routes, claim boundaries and coverage mapped to OMB M-25-22, with blocking gaps',
  },
];

/**
 * DCAT-US URLs must be absolute: they are built on the service's configured public origin
 * (SVC_PUBLIC_BASE_URL), never on the request's Host, which the caller chooses.
 */
export function documentContext(deps: RouteDeps, tenantId: string): DocumentContext {
  return { deps, tenantId, origin: deps.config.publicBaseUrl };
}

export function mountDocumentExports(router: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  for (const d of DOCUMENTS) {
    const route = defineRoute({
      method: 'get',
      path: d.path,
      operationId: d.operationId,
      tags: ['exports'],
      auth: deps.auth.keyOrSession('exports:read'),
      summary: d.summary,
      description: 'For owner review; not an authorization decision or an official approval.',
      request: { query: z.object({}).strict() },
      responses: { 200: jsonContent(Document(d.schema), 'The document') },
    });
    router.openapi(route, async (c) => c.json(await buildDocument(d.kind, documentContext(deps, c.var.auth.tenantId)), 200));
  }

  const report = defineRoute({
    method: 'get',
    path: '/tenant/exports/validation-report',
    operationId: 'getValidationReport',
    tags: ['exports'],
    auth: deps.auth.keyOrSession('exports:read'),
    summary: 'Per export: profile, validity now, receipt status and blocking gaps',
    request: { query: z.object({}).strict() },
    responses: { 200: jsonContent(Document('ValidationReport'), 'The report') },
  });
  router.openapi(report, async (c) => c.json(await validationReport(documentContext(deps, c.var.auth.tenantId)), 200));
}
