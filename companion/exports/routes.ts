/**
 * Tenant exports (interface-spec Endpoints "Tenant exports", What the service does 6): machine-
 * readable read models of the tenant's evidence for auditors and procurement, each stating that
 * it is for owner review and is not an authorization decision or an official approval.
 */
import { createRouter } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { mountDocumentExports } from './document-routes.ts';
import { mountRecordExports } from './records-routes.ts';
import { mountValidation } from './validation-routes.ts';

export function exportRoutes(deps: RouteDeps) {
  const router = createRouter();
  mountRecordExports(router, deps);
  mountDocumentExports(router, deps);
  mountValidation(router, deps);
  return router;
}
