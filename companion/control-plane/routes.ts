/**
 * The control plane, demo and deployment maps (interface-spec "Control plane, demo and
 * deployment": public GETs, no credentials, Authentication 4). Each answers 200 with an object
 * built on every request from the running configuration, the registries and the app's own
 * OpenAPI document; the module of each family says where every value comes from. No map
 * carries a secret value: settings that may hold one show only whether they are set.
 *
 * GET /deployment/signer-plan belongs to signer custody (control-plane/signer-plan.ts) and is
 * mounted beside these by that capability.
 */
import { createRouter, defineRoute, jsonContent } from '../core/router.ts';
import type { z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import type { IntegrationChannel } from '../integrations/channel.ts';
import { DemoFixtures, WebsiteDemoExport, demoFixtures, websiteDemoExport } from './demo.ts';
import {
  CtaBridgePlan,
  DomainPlan,
  EnvironmentPlan,
  HostingPlan,
  ImagePlan,
  OperationsPlan,
  ProxyPlan,
  SignupPlan,
  TenantConsolePlan,
  WebsiteCtaInventory,
  ctaBridgePlan,
  domainPlan,
  environmentPlan,
  hostingPlan,
  imagePlan,
  operationsPlan,
  proxyPlan,
  signupPlan,
  tenantConsolePlan,
  websiteCtaInventory,
} from './deployment.ts';
import { CatalogMap, CorpusMap, PackRegistry, ProductMap, VerticalPacks, catalogMap, corpusMap, packRegistry, productMap, verticalPacks } from './product.ts';
import { DatabasePlan, DeploymentReadiness, SecretPlan, WorkerPlan, databasePlan, deploymentReadiness, secretPlan, workerPlan } from './runtime.ts';
import { IntegrationRecipes, WorkflowMap, integrationRecipes, workflowMap } from './workflow.ts';

interface MapRoute<S extends z.ZodType = z.ZodType> {
  path: string;
  operationId: string;
  summary: string;
  schema: S;
  build(): z.infer<S> | Promise<z.infer<S>>;
}

const mapRoute = <S extends z.ZodType>(r: MapRoute<S>): MapRoute => r as unknown as MapRoute;

export function controlPlaneRoutes(channels: readonly IntegrationChannel<any>[]) {
  return (deps: RouteDeps) => {
    const router = createRouter();
    const { config } = deps;
    const doc = () => deps.describe();

    const maps: MapRoute[] = [
      mapRoute({ path: '/product-map', operationId: 'getProductMap', summary: 'Capabilities (OpenAPI tags) with their endpoints, and the packs', schema: ProductMap, build: () => productMap(doc()) }),
      mapRoute({ path: '/vertical-packs', operationId: 'getVerticalPacks', summary: 'Gate and record packs: digests, rates, required fields, action and event types', schema: VerticalPacks, build: verticalPacks }),
      mapRoute({ path: '/pack-registry', operationId: 'getPackRegistry', summary: 'Every registered pack with its manifest digest, and one registry digest', schema: PackRegistry, build: packRegistry }),
      mapRoute({ path: '/catalog-map', operationId: 'getCatalogMap', summary: 'The catalog_refs atoms a gate response can carry, with the packs that emit each', schema: CatalogMap, build: catalogMap }),
      mapRoute({ path: '/corpus-map', operationId: 'getCorpusMap', summary: 'Citations, rulesets, rubrics and schema profiles the rules and exports rest on', schema: CorpusMap, build: corpusMap }),
      mapRoute({ path: '/integration-recipes', operationId: 'getIntegrationRecipes', summary: 'How to connect each registered integration channel', schema: IntegrationRecipes, build: () => integrationRecipes(config, doc(), channels) }),
      mapRoute({ path: '/workflow-map', operationId: 'getWorkflowMap', summary: 'Decisions, review states, review routes and the steps of a gated action', schema: WorkflowMap, build: () => workflowMap(config, doc(), channels) }),
      mapRoute({ path: '/demo-fixtures', operationId: 'getDemoFixtures', summary: 'One valid synthetic request per pack, built from its manifest', schema: DemoFixtures, build: demoFixtures }),
      mapRoute({ path: '/website-demo-export', operationId: 'getWebsiteDemoExport', summary: 'The demo fixtures packaged for a website: base URL, signup, curl lines', schema: WebsiteDemoExport, build: () => websiteDemoExport(config, doc()) }),
      mapRoute({ path: '/deployment/image-plan', operationId: 'getImagePlan', summary: 'Container image: runtime, port, data volume, environment, health check', schema: ImagePlan, build: () => imagePlan(config, doc()) }),
      mapRoute({ path: '/deployment/hosting-plan', operationId: 'getHostingPlan', summary: 'Listen address, base URL, persistent paths, instance limits', schema: HostingPlan, build: () => hostingPlan(config) }),
      mapRoute({ path: '/deployment/domain-plan', operationId: 'getDomainPlan', summary: 'Base URL, TLS requirement, cookie security, public paths', schema: DomainPlan, build: () => domainPlan(config, doc()) }),
      mapRoute({ path: '/deployment/environment-plan', operationId: 'getEnvironmentPlan', summary: 'Every setting with its current value; secrets only as set or unset', schema: EnvironmentPlan, build: () => environmentPlan(config) }),
      mapRoute({ path: '/deployment/cta-bridge-plan', operationId: 'getCtaBridgePlan', summary: 'How website calls to action hand a visitor to the service', schema: CtaBridgePlan, build: () => ctaBridgePlan(config, doc()) }),
      mapRoute({ path: '/deployment/website-cta-inventory', operationId: 'getWebsiteCtaInventory', summary: 'Each website call to action and the route it lands on', schema: WebsiteCtaInventory, build: () => websiteCtaInventory(config, doc()) }),
      mapRoute({ path: '/deployment/proxy-plan', operationId: 'getProxyPlan', summary: 'Reverse proxy: upstream, paths by credential, raw-body routes, body limit', schema: ProxyPlan, build: () => proxyPlan(config, doc()) }),
      mapRoute({ path: '/deployment/tenant-console-plan', operationId: 'getTenantConsolePlan', summary: 'The authenticated operations a tenant console calls, by capability', schema: TenantConsolePlan, build: () => tenantConsolePlan(doc()) }),
      mapRoute({ path: '/deployment/database-plan', operationId: 'getDatabasePlan', summary: 'The open SQLite store: file, pragmas, size, migrations', schema: DatabasePlan, build: () => databasePlan(deps) }),
      mapRoute({ path: '/deployment/secret-plan', operationId: 'getSecretPlan', summary: 'Secret reference schemes, grant counts and key locations; never a value', schema: SecretPlan, build: () => secretPlan(deps, doc()) }),
      mapRoute({ path: '/deployment/worker-plan', operationId: 'getWorkerPlan', summary: 'The registered background workers: interval, liveness, last round', schema: WorkerPlan, build: () => workerPlan(deps) }),
      mapRoute({
        path: '/deployment/operations-plan',
        operationId: 'getOperationsPlan',
        summary: 'Operations endpoints, metrics protection, logging, readiness checks, workers, backup',
        schema: OperationsPlan,
        build: () => operationsPlan(config, doc(), { checks: deps.readiness.names(), workers: deps.workers.status().map((w) => w.name) }),
      }),
      mapRoute({ path: '/deployment/signup-plan', operationId: 'getSignupPlan', summary: 'Sandbox signup, key prefixes, upgrade and billing routes, provider and pricing', schema: SignupPlan, build: () => signupPlan(config, doc()) }),
      mapRoute({
        path: '/deployment/readiness',
        operationId: 'getDeploymentReadiness',
        summary: 'The /readyz checks run now, each explained with what to do when it fails; 200 with ready true or false',
        schema: DeploymentReadiness,
        build: () => deploymentReadiness(deps),
      }),
    ];

    for (const m of maps) {
      const route = defineRoute({
        method: 'get',
        path: m.path,
        operationId: m.operationId,
        tags: ['control-plane'],
        auth: 'public',
        summary: m.summary,
        responses: { 200: jsonContent(m.schema, 'Generated from the running configuration and code') },
      });
      router.openapi(route, async (c) => {
        // Maps follow live state (workers, readiness, the database): never cached.
        c.header('cache-control', 'no-store');
        return c.json((await m.build()) as never, 200);
      });
    }
    return router;
  };
}
