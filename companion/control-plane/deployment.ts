/**
 * Deployment plans read from the running configuration and code. The running service may
 * not have the repository beside it (a container holds dist/ only), so nothing here reads the
 * Dockerfile or deploy/: the facts come from config (core/config.ts), the process (node
 * version, platform), code constants (signing key file, database file, key prefixes, metering)
 * and the OpenAPI document (which routes this build serves, and with which credential).
 *
 *   image-plan            runtime, the port/data volume/environment a container needs, its
 *                         health check and stop timeout (shutdown grace + margin)
 *   hosting-plan          listen address, base URL, data directory, single-writer SQLite
 *                         constraint, what must persist, the systemd unit name
 *   domain-plan           base URL parts, whether TLS is required (anything beyond loopback),
 *                         the public paths a domain must serve, cookie security
 *   environment-plan      every SETTINGS row with its current value; values of settings
 *                         without a command-line flag (secrets never have one, config.ts) are
 *                         shown only as set/unset, secret grants only as counts
 *   cta-bridge-plan       how a website hands a visitor to the service: public entry points and
 *                         whether this build serves each
 *   website-cta-inventory each call to action a website may show, pointed at its route
 *   proxy-plan            upstream, paths split by credential, raw-body routes, body limit,
 *                         headers to pass through
 *   tenant-console-plan   the key- and session-authenticated operations a console would call,
 *                         grouped by capability, and whether account sessions are served yet
 *   operations-plan       ops endpoints, metrics protection, logging, readiness checks,
 *                         workers, backup of the data directory
 *   signup-plan           sandbox allowance, key prefixes, signup and upgrade routes, pricing
 */
import { API_KEY_PREFIX } from '../core/auth.ts';
import { SETTINGS } from '../core/config.ts';
import type { Config, Setting } from '../core/config.ts';
import { DATABASE_FILE } from '../core/db.ts';
import { LOG_FIELDS } from '../core/log.ts';
import type { OpenApiDocument } from '../core/openapi.ts';
import { SESSION_COOKIE } from '../core/openapi.ts';
import { plainLoopbackOrigin } from '../core/public-origin.ts';
import { z } from '../core/router.ts';
import { PRODUCTION_KEY_FILE } from '../core/signer.ts';
import { SERVICE_VERSION } from '../core/version.ts';
import { SANDBOX_ALLOWANCE } from '../account/signup.ts';
import { UPGRADE_HREF } from '../metering/upgrade-pointers.ts';
import { CENTS_PER_CREDIT, MAX_CREDITS_PER_ACTION } from '../metering/credits.ts';
import { displayPath, findOperation, listensOnLoopback, operations, publicBaseUrl, serves } from './sources.ts';
import type { Operation } from './sources.ts';

/** The example unit's name (deploy/action-gate.service); README "Run it as a service". */
export const SYSTEMD_UNIT = 'action-gate.service';
/** Seconds a service manager should wait beyond the drain before it kills the process. */
const STOP_MARGIN_SECONDS = 5;

const Route = z.object({ method: z.string(), path: z.string(), served: z.boolean() });
const route = (document: OpenApiDocument, method: string, path: string) => ({ method, path, served: serves(document, method, path) });

export const ImagePlan = z
  .object({
    service_version: z.string(),
    runtime: z.object({ node: z.string(), platform: z.string(), arch: z.string() }),
    container: z.object({
      port: z.number().int(),
      data_volume: z.string(),
      environment: z.record(z.string(), z.string()),
      user: z.literal('unprivileged'),
      healthcheck: Route,
      stop_signal: z.literal('SIGTERM'),
      stop_timeout_seconds: z.number().int(),
      command: z.array(z.string()),
    }),
  })
  .openapi('ImagePlan');

export function imagePlan(config: Config, document: OpenApiDocument): z.infer<typeof ImagePlan> {
  return {
    service_version: SERVICE_VERSION,
    runtime: { node: process.versions.node, platform: process.platform, arch: process.arch },
    container: {
      port: config.port,
      data_volume: displayPath(config.dataDir),
      // A container must listen on every interface to be reachable through its published port.
      environment: { HOST: '0.0.0.0', PORT: String(config.port), SVC_DATA_DIR: displayPath(config.dataDir), NODE_ENV: 'production' },
      user: 'unprivileged',
      healthcheck: route(document, 'GET', '/healthz'),
      stop_signal: 'SIGTERM',
      stop_timeout_seconds: Math.ceil(config.shutdownGraceMs / 1000) + STOP_MARGIN_SECONDS,
      command: ['node', 'dist/companion/main.js'],
    },
  };
}

export const HostingPlan = z
  .object({
    listen: z.object({ host: z.string(), port: z.number().int(), loopback_only: z.boolean() }),
    base_url: z.string(),
    instances: z.object({ max_per_data_dir: z.literal(1), why: z.string() }),
    persistent: z.array(z.object({ path: z.string(), holds: z.string() })),
    systemd_unit: z.string(),
    shutdown_grace_ms: z.number().int(),
    advice: z.array(z.string()),
  })
  .openapi('HostingPlan');

export function hostingPlan(config: Config): z.infer<typeof HostingPlan> {
  const loopback = listensOnLoopback(config);
  const data = displayPath(config.dataDir);
  return {
    listen: { host: config.host, port: config.port, loopback_only: loopback },
    base_url: publicBaseUrl(config),
    instances: { max_per_data_dir: 1, why: 'one SQLite file in WAL mode with one writer process; scale by tenant, not by replica' },
    persistent: [
      { path: `${data}/${DATABASE_FILE}`, holds: 'evidence, tenants, usage (with its -wal and -shm files)' },
      { path: `${data}/${PRODUCTION_KEY_FILE}`, holds: 'the production signing key (mode 0600, never served)' },
    ],
    systemd_unit: SYSTEMD_UNIT,
    shutdown_grace_ms: config.shutdownGraceMs,
    advice: [
      ...(loopback ? [] : ['listening beyond loopback: put a TLS-terminating proxy in front (see /deployment/proxy-plan)']),
      ...(!loopback && config.metricsToken === undefined ? ['set SVC_METRICS_TOKEN: /metrics is open to anyone who reaches the port'] : []),
    ],
  };
}

export const DomainPlan = z
  .object({
    base_url: z.string(),
    scheme: z.string(),
    host: z.string(),
    port: z.number().int(),
    tls_required: z.boolean(),
    session_cookie: z.object({ name: z.string(), secure: z.boolean() }),
    public_paths: z.array(z.string()),
  })
  .openapi('DomainPlan');

export function domainPlan(config: Config, document: OpenApiDocument): z.infer<typeof DomainPlan> {
  const base = new URL(publicBaseUrl(config));
  // interface-spec Events 7 and DESIGN.md §6: only a plain-http loopback origin may go without
  // TLS; the session cookie is Secure everywhere else (core/public-origin.ts).
  const tls = !plainLoopbackOrigin(config);
  return {
    base_url: base.origin,
    scheme: base.protocol.replace(':', ''),
    host: base.hostname,
    port: config.port,
    tls_required: tls,
    session_cookie: { name: SESSION_COOKIE, secure: tls },
    public_paths: [...new Set(operations(document).filter((o) => o.auth === 'public').map((o) => o.path))],
  };
}

const SettingRow = z.object({
  env: z.string(),
  flag: z.string().nullable(),
  default: z.string(),
  help: z.string(),
  reserved: z.boolean(),
  sensitive: z.boolean(),
  value: z.union([z.string(), z.number(), z.boolean(), z.null()]),
});

export const EnvironmentPlan = z
  .object({ settings: z.array(SettingRow), rule: z.string() })
  .openapi('EnvironmentPlan');

/** Secrets never have a flag (core/config.ts): a command line is visible to every local user. */
const isSensitive = (s: Setting) => s.flag === undefined;

function shownValue(s: Setting, config: Config): string | number | boolean | null {
  const value = config[s.key] as unknown;
  if (s.key === 'secretGrants') {
    const grants = value as Record<string, string[]>;
    const refs = Object.values(grants).reduce((n, r) => n + r.length, 0);
    return `${Object.keys(grants).length} tenant(s), ${refs} reference(s)`;
  }
  if (isSensitive(s)) return value === undefined || value === null ? 'unset' : 'set';
  if (value === undefined || value === null) return null;
  if (s.key === 'dataDir' || s.key === 'secretRefMapFile') return displayPath(String(value));
  return typeof value === 'object' ? JSON.stringify(value) : (value as string | number | boolean);
}

export function environmentPlan(config: Config): z.infer<typeof EnvironmentPlan> {
  return {
    settings: (SETTINGS as readonly Setting[]).map((s) => ({
      env: s.env,
      flag: s.flag ? `--${s.flag}` : null,
      default: s.defaultText,
      help: s.help,
      reserved: s.reserved !== undefined,
      sensitive: isSensitive(s),
      value: shownValue(s, config),
    })),
    rule: 'settings without a command-line flag may hold secrets: their values show only as set or unset (grants as counts)',
  };
}

const Cta = z.object({ id: z.string(), label: z.string(), method: z.string(), path: z.string(), auth: z.string(), served: z.boolean(), operation_id: z.string().nullable() });

/** The calls to action a website can offer, and the route each one lands on. */
const CTAS = [
  { id: 'try-sandbox', label: 'Get a sandbox key', method: 'POST', path: '/signup/checkout' },
  { id: 'see-packs', label: 'See the vertical packs', method: 'GET', path: '/vertical-packs' },
  { id: 'run-demo', label: 'Run the demo', method: 'GET', path: '/website-demo-export' },
  { id: 'verify-evidence', label: 'Verify a seal offline', method: 'GET', path: '/v1/verify/kit' },
  { id: 'read-api', label: 'Read the API', method: 'GET', path: '/openapi.json' },
  { id: 'upgrade', label: 'Upgrade to production', method: 'POST', path: UPGRADE_HREF },
  { id: 'sign-in', label: 'Sign in to the console', method: 'POST', path: '/account/session' },
] as const;

function cta(document: OpenApiDocument, c: (typeof CTAS)[number]): z.infer<typeof Cta> {
  const op = findOperation(document, c.method, c.path);
  return { ...c, auth: op?.auth ?? 'unknown', served: op !== undefined, operation_id: op?.operation_id ?? null };
}

export const WebsiteCtaInventory = z.object({ base_url: z.string(), ctas: z.array(Cta) }).openapi('WebsiteCtaInventory');

export function websiteCtaInventory(config: Config, document: OpenApiDocument): z.infer<typeof WebsiteCtaInventory> {
  return { base_url: publicBaseUrl(config), ctas: CTAS.map((c) => cta(document, c)) };
}

export const CtaBridgePlan = z
  .object({
    base_url: z.string(),
    bridges: z.array(z.object({ from: z.string(), to: Route, hands_over: z.string() })),
    ready: z.array(z.string()),
    missing: z.array(z.string()),
  })
  .openapi('CtaBridgePlan');

export function ctaBridgePlan(config: Config, document: OpenApiDocument): z.infer<typeof CtaBridgePlan> {
  const ctas = CTAS.map((c) => cta(document, c));
  const handsOver: Record<(typeof CTAS)[number]['id'], string> = {
    'try-sandbox': 'an email; the answer shows the sandbox key once',
    'see-packs': 'nothing; public',
    'run-demo': 'nothing; public, then the visitor\'s own sandbox key',
    'verify-evidence': 'nothing; public',
    'read-api': 'nothing; public',
    upgrade: 'the account session (cookie), never a key in the URL',
    'sign-in': 'an API key once, exchanged for the session cookie',
  };
  return {
    base_url: publicBaseUrl(config),
    bridges: ctas.map((c) => ({ from: c.id, to: { method: c.method, path: c.path, served: c.served }, hands_over: handsOver[c.id as keyof typeof handsOver] })),
    ready: ctas.filter((c) => c.served).map((c) => c.id),
    missing: ctas.filter((c) => !c.served).map((c) => c.id),
  };
}

export const ProxyPlan = z
  .object({
    upstream: z.string(),
    tls_termination: z.literal('proxy'),
    tls_required: z.boolean().openapi({ description: 'false only for a plain-http loopback origin' }),
    session_cookie_secure: z.boolean(),
    trusted_proxies: z.array(z.string()).openapi({ description: 'SVC_TRUST_PROXY: the peers whose X-Forwarded-Proto and X-Forwarded-For are believed' }),
    max_body_bytes: z.number().int(),
    pass_headers: z.array(z.string()),
    preserve_raw_body: z.array(z.string()),
    paths: z.object({ public: z.array(z.string()), api_key: z.array(z.string()), other: z.array(z.string()) }),
    timeouts: z.object({ drain_ms: z.number().int() }),
  })
  .openapi('ProxyPlan');

const pathsWhere = (ops: Operation[], keep: (o: Operation) => boolean) => [...new Set(ops.filter(keep).map((o) => o.path))];

export function proxyPlan(config: Config, document: OpenApiDocument): z.infer<typeof ProxyPlan> {
  const ops = operations(document);
  return {
    upstream: publicBaseUrl(config),
    // The companion speaks plain HTTP (core/server.ts); TLS ends at the proxy.
    tls_termination: 'proxy',
    tls_required: !plainLoopbackOrigin(config),
    session_cookie_secure: !plainLoopbackOrigin(config),
    trusted_proxies: config.trustProxy,
    // A proxy limit below this answers 413 before the service can say which limit applies.
    max_body_bytes: config.maxBodyBytes,
    // X-Forwarded-Proto and -For are believed only from SVC_TRUST_PROXY's peers.
    pass_headers: ['X-Forwarded-Proto', 'X-Forwarded-For', 'Authorization', 'X-Service-Key', 'X-Request-Id', 'Cookie', 'Content-Type', 'If-None-Match', 'X-Service-Signature', 'X-Slack-Signature', 'X-Slack-Request-Timestamp'],
    // Signatures cover the exact bytes (interface-spec Authentication 3): no re-encoding, no buffering rewrites.
    preserve_raw_body: pathsWhere(ops, (o) => o.auth === 'signed_request'),
    paths: {
      public: pathsWhere(ops, (o) => o.auth === 'public'),
      api_key: pathsWhere(ops, (o) => o.auth === 'api_key'),
      other: pathsWhere(ops, (o) => o.auth !== 'public' && o.auth !== 'api_key'),
    },
    timeouts: { drain_ms: config.shutdownGraceMs },
  };
}

export const TenantConsolePlan = z
  .object({
    sessions_served: z.boolean(),
    session_cookie: z.string(),
    console_path: z.string().nullable().openapi({ description: 'Where this build serves the tenant console; null when it does not' }),
    sections: z.array(
      z.object({
        capability: z.string(),
        operations: z.array(
          z.object({
            method: z.string(),
            path: z.string(),
            operation_id: z.string(),
            auth: z.string(),
            accepts_session: z.boolean().openapi({ description: 'The console may call it with the account session instead of a key' }),
          }),
        ),
      }),
    ),
  })
  .openapi('TenantConsolePlan');

export function tenantConsolePlan(document: OpenApiDocument): z.infer<typeof TenantConsolePlan> {
  const ops = operations(document).filter((o) => o.auth === 'api_key' || o.auth === 'account_session');
  const capabilities = [...new Set(ops.flatMap((o) => o.tags))];
  return {
    sessions_served: serves(document, 'POST', '/account/session'),
    session_cookie: SESSION_COOKIE,
    console_path: serves(document, 'GET', '/console') ? '/console' : null,
    sections: capabilities.map((capability) => ({
      capability,
      operations: ops
        .filter((o) => o.tags.includes(capability))
        .map((o) => ({ method: o.method, path: o.path, operation_id: o.operation_id, auth: o.auth, accepts_session: o.schemes.includes('ServiceAccountSession') })),
    })),
  };
}

export const OperationsPlan = z
  .object({
    endpoints: z.array(z.object({ method: z.string(), path: z.string(), auth: z.string() })),
    metrics_protected: z.boolean(),
    logging: z.object({ level: z.string(), format: z.literal('json-lines'), fields: z.array(z.string()) }),
    readiness_checks: z.array(z.string()),
    workers: z.array(z.string()),
    backup: z.object({ paths: z.array(z.string()), method: z.string() }),
    epoch_seconds: z.number().int(),
  })
  .openapi('OperationsPlan');

export function operationsPlan(config: Config, document: OpenApiDocument, runtime: { checks: string[]; workers: string[] }): z.infer<typeof OperationsPlan> {
  const data = displayPath(config.dataDir);
  return {
    endpoints: operations(document).filter((o) => o.tags.includes('operations')).map((o) => ({ method: o.method, path: o.path, auth: o.auth })),
    metrics_protected: config.metricsToken !== undefined,
    logging: { level: config.logLevel, format: 'json-lines', fields: Object.keys(LOG_FIELDS).sort() },
    readiness_checks: runtime.checks,
    workers: runtime.workers,
    backup: {
      paths: [`${data}/${DATABASE_FILE}`, `${data}/${PRODUCTION_KEY_FILE}`],
      // A copy of a live WAL database needs SQLite's online backup (or VACUUM INTO), not cp.
      method: `sqlite3 ${data}/${DATABASE_FILE} ".backup backup.db"; copy the key file with its 0600 mode`,
    },
    epoch_seconds: config.epochSeconds,
  };
}

export const SignupPlan = z
  .object({
    signup: Route,
    sandbox: z.object({ allowance_actions: z.number().int(), key_prefix: z.string(), per_email: z.literal(1), dev_key: z.literal(true) }),
    production: z.object({ key_prefix: z.string(), cents_per_credit: z.number().int(), max_credits_per_action: z.number().int() }),
    upgrade: Route,
    account: Route,
    billing: z.object({
      provider: z.enum(['local', 'stripe']),
      configured: z.boolean().openapi({ description: "Whether the provider's secret references are set (they are resolved only when used)" }),
      session: Route,
      complete_upgrade: Route,
      portal: Route,
    }),
  })
  .openapi('SignupPlan');

export function signupPlan(config: Config, document: OpenApiDocument): z.infer<typeof SignupPlan> {
  return {
    signup: route(document, 'POST', '/signup/checkout'),
    sandbox: { allowance_actions: SANDBOX_ALLOWANCE, key_prefix: API_KEY_PREFIX.sandbox, per_email: 1, dev_key: true },
    production: { key_prefix: API_KEY_PREFIX.production, cents_per_credit: CENTS_PER_CREDIT, max_credits_per_action: MAX_CREDITS_PER_ACTION },
    upgrade: route(document, 'POST', UPGRADE_HREF),
    account: route(document, 'GET', '/account/me'),
    billing: {
      provider: config.billingProvider,
      configured: config.billingProvider === 'local' ? config.billingLocalSecretRef !== null : config.stripeSecretKeyRef !== null && config.stripePriceId !== null,
      session: route(document, 'POST', '/account/session'),
      complete_upgrade: route(document, 'POST', '/account/billing/complete-upgrade'),
      portal: route(document, 'POST', '/account/billing-portal'),
    },
  };
}
