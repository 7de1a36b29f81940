/**
 * Companion configuration (DESIGN.md §2): every setting is one row of SETTINGS, read from
 * its environment variable or its `--flag` twin (the flag wins). The same rows print
 * `--help`, so the help cannot forget a setting. Parsing is pure: no I/O, so a test can build
 * any configuration from plain objects. Every invalid value is reported at once, then startup
 * stops: a half-understood configuration never serves requests.
 */
import { isIP } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { grantProblems } from './secrets/grants.ts';
import { parseSecretRef, schemeAvailable, unavailableReason } from './secrets/refs.ts';
import { LOG_LEVELS } from './log.ts';
import type { LogLevel } from './log.ts';
import { SIGNER_KINDS } from './signer.ts';
import { parseWitnessList } from '../../shared/witness.ts';

/** One witness as configured: plain data (the key as its verifier key text), checked by parseWitnessList. */
export interface WitnessSetting {
  name: string;
  url: string;
  key: string;
}
import type { SignerKind } from './signer.ts';

export interface Config {
  /** TCP port; 0 asks the OS for a free one (tests). */
  port: number;
  host: string;
  /** Absolute path of the data directory (SQLite file, production signing key). */
  dataDir: string;
  /**
   * postgres:// URL of the scale-out engine's database; undefined runs on the embedded SQLite
   * file in dataDir. Never carries a password (PGPASSWORD does).
   */
  databaseUrl: string | undefined;
  /** Lines below this level are not logged. */
  logLevel: LogLevel;
  /** When set, GET /metrics requires `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  /** Largest request body accepted; bigger bodies answer 413 problem+json. */
  maxBodyBytes: number;
  /** How long shutdown waits for in-flight requests before closing their connections. */
  shutdownGraceMs: number;
  /** Review window: a paused action unanswered this long expires and fails closed (reviews/state.ts). */
  reviewTimeoutSeconds: number;
  /** Roll-up epoch cadence (DESIGN.md §4); hourly by default. */
  epochSeconds: number;
  /** RFC 3161 time-stamp authorities every closed epoch's checkpoint is sent to (anchoring/timestamps.ts). */
  tsaUrls: string[];
  /** PEM file of the root certificates a TSA's token must chain to; required with tsaUrls. */
  tsaRootsFile: string | undefined;
  /** C2SP tlog-witness witnesses every closed epoch's checkpoint is sent to for cosigning (anchoring/witness.ts). */
  witnesses: WitnessSetting[];
  /** The same list in a JSON file, read at start; exclusive with witnesses. */
  witnessesFile: string | undefined;
  /** Operator setting: allow http://127.0.0.1 webhook receivers (interface-spec Events 7). */
  webhookAllowLoopback: boolean;
  /** The explicit external-send flag: only with it does the route outbox worker post dispatches out. */
  outboxExternalSend: boolean;
  /**
   * Seal on a thread of its own (seal-thread/), the default: the embedded engine's seal
   * transactions and their fsync run beside the request thread instead of on it. SQLite with
   * the file custody only.
   */
  sealThread: boolean;
  /**
   * The service's own public address, for the callback URLs handed to chat and workflow
   * platforms (routing/); never taken from a request's Host header, which a caller chooses.
   */
  publicBaseUrl: string;
  /**
   * Peers (exact IP addresses) whose X-Forwarded-Proto and X-Forwarded-For are believed: the
   * TLS-terminating proxy in front. Empty: every forwarded header is ignored (core/public-origin.ts).
   */
  trustProxy: string[];
  /** Sandbox signups per minute per client address (the service-wide bucket holds ten times it); 0: unlimited. */
  signupRatePerMinute: number;
  /** Operator grants: tenant id (or "*") → the exact secret references it may use (core/secret-refs.ts). */
  secretGrants: Record<string, string[]>;
  /** The same grants in a JSON file, re-read on SIGHUP; exclusive with secretGrants. */
  secretGrantsFile: string | undefined;
  /** JSON file mapping secret://… references to values, read at start and on SIGHUP. */
  secretRefMapFile: string | undefined;
  /** AWS Secrets Manager for aws-sm:// references: region (null: aws-sm:// unavailable) and endpoint override. */
  awsSmRegion: string | null;
  awsSmEndpoint: string | null;
  /** HashiCorp Vault (KV v2) for vault:// references: address, a reference to its token, optional namespace. */
  vaultAddr: string | null;
  vaultTokenRef: string | null;
  vaultNamespace: string | null;
  /** How long one secret-manager call may take. */
  secretTimeoutMs: number;
  /** How long a value fetched from a secret manager is reused (0: never). */
  secretCacheSeconds: number;
  /**
   * Secret reference of the key-encryption key that seals the secrets the service stores
   * (core/secrets/store-kek.ts); null: a KEK file the service makes in the data directory.
   */
  storeKekRef: string | null;
  /** References of earlier KEKs, read only to open values not yet re-wrapped (svc-admin rewrap-secrets). */
  storeKekPreviousRefs: string[];
  /** The built tenant console's folder (companion/console/); unset: dist/console beside the build. */
  consoleDir: string | undefined;
  /** How long a delivery worker holds a claimed job before another may take it over. */
  webhookLeaseSeconds: number;
  /** DCAT-US 1.1 federal fields of the data-catalog export (exports/data-catalog.ts); null when unset. */
  catalogBureauCode: string | null;
  catalogProgramCode: string | null;
  catalogContactName: string | null;
  catalogContactEmail: string | null;
  /** How long an idempotency key replays its first answer; after it the key is forgotten (evidence/idempotency/). */
  idempotencyTtlSeconds: number;
  /** Account session lifetime (account/people.ts). */
  sessionTtlSeconds: number;
  /** Which payment provider upgrades tenants to production (account/billing/). */
  billingProvider: 'local' | 'stripe';
  /** Secret reference of the operator secret that signs local-provider checkouts. */
  billingLocalSecretRef: string | null;
  /** Secret references of the Stripe secret key and webhook signing secret. */
  stripeSecretKeyRef: string | null;
  stripeWebhookSecretRef: string | null;
  /** The Stripe Price a production subscription is created with. */
  stripePriceId: string | null;
  /** Stripe API base URL override (a loopback stand-in); null: the SDK's default api.stripe.com. */
  stripeApiBase: string | null;
  /** Where a payment provider sends the person back after checkout or the portal. */
  billingReturnUrl: string | null;
  /** Production signing custody (core/signers/select.ts): file (embedded default), pkcs11 or aws-kms. */
  signer: SignerKind;
  /** PKCS#11 module (shared library) path, e.g. /usr/lib/softhsm/libsofthsm2.so. */
  pkcs11Module: string | null;
  pkcs11TokenLabel: string | null;
  pkcs11KeyLabel: string;
  /** A secret reference (env://…, secret://…) to the token's user PIN: never the PIN itself. */
  pkcs11PinRef: string | null;
  /** Generate a non-extractable Ed25519 key pair on the token when none has the key label. */
  pkcs11CreateKey: boolean;
  /** AWS KMS key id, ARN or alias of an ECC_NIST_EDWARDS25519 SIGN_VERIFY key. */
  kmsKeyId: string | null;
  kmsRegion: string | null;
  /** KMS endpoint override (a VPC endpoint, or a loopback stand-in in tests). */
  kmsEndpoint: string | null;
  /** How long one KMS call may hold a seal before it is refused with 503. */
  kmsTimeoutMs: number;
}

export const CONFIG_DEFAULTS = {
  port: 8787,
  host: '127.0.0.1',
  dataDir: './.svc-data',
  logLevel: 'info',
  epochSeconds: 3600,
  maxBodyBytes: 1024 * 1024,
  shutdownGraceMs: 10_000,
  reviewTimeoutSeconds: 72 * 3600,
  webhookLeaseSeconds: 60,
  idempotencyTtlSeconds: 24 * 3600,
  sessionTtlSeconds: 8 * 3600,
  signer: 'file',
  pkcs11KeyLabel: 'svc-production-ed25519',
  kmsTimeoutMs: 2000,
  secretTimeoutMs: 2000,
  secretCacheSeconds: 60,
  signupRatePerMinute: 30,
} as const;

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Raw = string | undefined;
type Parse<T> = (raw: Raw, name: string, problems: string[]) => T;

export interface Setting<K extends keyof Config = keyof Config> {
  key: K;
  env: string;
  /** Secrets have no flag: a command line is visible to every local user (ps). */
  flag?: string;
  /** As shown in --help and the README. */
  defaultText: string;
  help: string;
  /** Set for settings nothing reads yet: named in --help so nobody relies on them. */
  reserved?: string;
  parse: Parse<Config[K]>;
}

const setting = <K extends keyof Config>(s: Setting<K>): Setting<K> => s;


/** Every setting the companion knows, in --help order. */
export const SETTINGS = [
  setting({ key: 'port', env: 'PORT', flag: 'port', defaultText: String(CONFIG_DEFAULTS.port), help: 'listening port (0 picks a free one)', parse: integer(CONFIG_DEFAULTS.port, 0, 65_535) }),
  setting({ key: 'host', env: 'HOST', flag: 'host', defaultText: CONFIG_DEFAULTS.host, help: 'listening address', parse: host }),
  setting({
    key: 'dataDir',
    env: 'SVC_DATA_DIR',
    flag: 'data-dir',
    defaultText: CONFIG_DEFAULTS.dataDir,
    help: 'database and production signing key (relative to the working directory)',
    parse: nonEmpty(CONFIG_DEFAULTS.dataDir),
  }),
  setting({
    key: 'databaseUrl',
    env: 'SVC_DATABASE_URL',
    flag: 'database-url',
    defaultText: '(unset: the embedded SQLite file in the data directory)',
    help: 'PostgreSQL for several companions on one database: postgres://user@host:5432/db?sslmode=require (password in PGPASSWORD, never in the URL)',
    parse: databaseUrl,
  }),
  setting({ key: 'logLevel', env: 'SVC_LOG_LEVEL', flag: 'log-level', defaultText: CONFIG_DEFAULTS.logLevel, help: `least severe log line written: ${LOG_LEVELS.join(', ')}`, parse: logLevel }),
  setting({
    key: 'metricsToken',
    env: 'SVC_METRICS_TOKEN',
    defaultText: '(unset: /metrics is open)',
    help: 'bearer token GET /metrics requires (16 to 256 visible ASCII characters)',
    parse: token,
  }),
  setting({
    key: 'maxBodyBytes',
    env: 'SVC_MAX_BODY_BYTES',
    flag: 'max-body-bytes',
    defaultText: String(CONFIG_DEFAULTS.maxBodyBytes),
    help: 'request-size limit (413 above it)',
    parse: integer(CONFIG_DEFAULTS.maxBodyBytes, 1024, 64 * 1024 * 1024),
  }),
  setting({
    key: 'shutdownGraceMs',
    env: 'SVC_SHUTDOWN_GRACE_MS',
    flag: 'shutdown-grace-ms',
    defaultText: String(CONFIG_DEFAULTS.shutdownGraceMs),
    help: 'how long shutdown waits for in-flight requests',
    parse: integer(CONFIG_DEFAULTS.shutdownGraceMs, 0, 600_000),
  }),
  setting({
    key: 'reviewTimeoutSeconds',
    env: 'SVC_REVIEW_TIMEOUT_SECONDS',
    flag: 'review-timeout-seconds',
    defaultText: `${CONFIG_DEFAULTS.reviewTimeoutSeconds} (72 h)`,
    help: 'how long a paused action waits for review before it expires and fails closed',
    parse: integer(CONFIG_DEFAULTS.reviewTimeoutSeconds, 60, 365 * 86_400),
  }),
  setting({
    key: 'epochSeconds',
    env: 'SVC_EPOCH_SECONDS',
    flag: 'epoch-seconds',
    defaultText: String(CONFIG_DEFAULTS.epochSeconds),
    help: 'Merkle roll-up epoch cadence (UTC boundaries)',
    parse: integer(CONFIG_DEFAULTS.epochSeconds, 1, 86_400),
  }),
  setting({
    key: 'tsaUrls',
    env: 'SVC_TSA_URLS',
    flag: 'tsa-urls',
    defaultText: '(none: epochs are not timestamped)',
    help: 'comma-separated RFC 3161 time-stamp authority URLs (https; http://127.0.0.1 only with SVC_WEBHOOK_ALLOW_LOOPBACK=1): each closed epoch\'s checkpoint is timestamped by each, through the guarded outbound client',
    parse: tsaUrls,
  }),
  setting({
    key: 'tsaRootsFile',
    env: 'SVC_TSA_ROOTS_FILE',
    flag: 'tsa-roots-file',
    defaultText: '(unset; required with SVC_TSA_URLS)',
    help: 'PEM file of the root certificates a time-stamp authority\'s certificate must chain to; a token that does not is refused',
    parse: optionalText,
  }),
  setting({
    key: 'witnesses',
    env: 'SVC_WITNESSES',
    flag: 'witnesses',
    defaultText: '(none: checkpoints are not witnessed)',
    help: 'JSON array of C2SP tlog-witness witnesses, [{"name", "url", "key"}] with key the witness verifier key (note format, type 0x04): each closed epoch\'s checkpoint is sent to <url>/add-checkpoint through the guarded outbound client (http://127.0.0.1 only with SVC_WEBHOOK_ALLOW_LOOPBACK=1)',
    parse: witnessList,
  }),
  setting({
    key: 'witnessesFile',
    env: 'SVC_WITNESSES_FILE',
    flag: 'witnesses-file',
    defaultText: '(unset)',
    help: 'the SVC_WITNESSES list in a JSON file, read at start (exclusive with SVC_WITNESSES)',
    parse: optionalText,
  }),
  setting({
    key: 'webhookAllowLoopback',
    env: 'SVC_WEBHOOK_ALLOW_LOOPBACK',
    flag: 'webhook-allow-loopback',
    defaultText: '0',
    help: '1: allow http://127.0.0.1 webhook receivers (local development only)',
    parse: boolean,
  }),
  setting({
    key: 'outboxExternalSend',
    env: 'SVC_OUTBOX_EXTERNAL_SEND',
    flag: 'outbox-external-send',
    defaultText: '0',
    help: '1: the explicit flag that lets the route outbox worker post review dispatches out',
    parse: boolean,
  }),
  setting({
    key: 'sealThread',
    env: 'SVC_SEAL_THREAD',
    flag: 'seal-thread',
    defaultText: '1',
    help: 'seal on a thread of its own, beside the request thread (embedded SQLite with SVC_SIGNER=file); 0: on the request thread',
    parse: booleanOr(true),
  }),
  setting({
    key: 'publicBaseUrl',
    env: 'SVC_PUBLIC_BASE_URL',
    flag: 'public-base-url',
    defaultText: 'http://127.0.0.1:<port>',
    help: 'the address platforms call back on (callback URLs in dispatches and integration docs); http(s) origin, no path',
    parse: baseUrl,
  }),
  setting({
    key: 'trustProxy',
    env: 'SVC_TRUST_PROXY',
    flag: 'trust-proxy',
    defaultText: '(none)',
    help: 'comma-separated IP addresses of the TLS-terminating proxy: only from these peers are X-Forwarded-Proto (the session cookie\'s Secure) and X-Forwarded-For (the signup rate limit\'s client) believed',
    parse: ipList,
  }),
  setting({
    key: 'signupRatePerMinute',
    env: 'SVC_SIGNUP_RATE_PER_MINUTE',
    flag: 'signup-rate-per-minute',
    defaultText: String(CONFIG_DEFAULTS.signupRatePerMinute),
    help: 'sandbox signups per minute per client address, ten times it for all addresses together; past it 429 with Retry-After; 0: unlimited (test rigs)',
    parse: integer(CONFIG_DEFAULTS.signupRatePerMinute, 0, 1_000_000),
  }),
  setting({
    key: 'secretGrants',
    env: 'SVC_SECRET_GRANTS',
    defaultText: '(none)',
    help: 'operator grants: JSON object, tenant id (or "*" for every tenant) → the exact secret references it may use, e.g. {"ten_…":["env://HOOK_KEY"]}; secret://tenants/{tenant_id}/… needs no grant',
    parse: stringArrays,
  }),
  setting({
    key: 'secretGrantsFile',
    env: 'SVC_SECRET_GRANTS_FILE',
    flag: 'secret-grants-file',
    defaultText: '(unset)',
    help: 'the same grants as a JSON file, re-read on SIGHUP (set this or SVC_SECRET_GRANTS, not both)',
    parse: optionalText,
  }),
  setting({
    key: 'secretRefMapFile',
    env: 'SVC_SECRET_REF_MAP_FILE',
    flag: 'secret-ref-map-file',
    defaultText: '(unset)',
    help: 'JSON file mapping secret://… references to values, read at start and re-read on SIGHUP',
    parse: optionalText,
  }),
  setting({
    key: 'awsSmRegion',
    env: 'SVC_AWS_SM_REGION',
    flag: 'aws-sm-region',
    defaultText: '(unset: aws-sm:// references are refused)',
    help: 'AWS Secrets Manager region for aws-sm:// references, e.g. eu-west-1 (credentials come from the SDK\'s usual chain)',
    parse: optionalMatching(/^[a-z0-9-]{1,64}$/, 'an AWS region such as eu-west-1'),
  }),
  setting({
    key: 'awsSmEndpoint',
    env: 'SVC_AWS_SM_ENDPOINT',
    flag: 'aws-sm-endpoint',
    defaultText: '(unset: the region\'s public endpoint)',
    help: 'AWS Secrets Manager endpoint override, e.g. a VPC endpoint URL',
    parse: optionalMatching(/^https?:\/\/[^\s]{1,2040}$/, 'an http(s) URL'),
  }),
  setting({
    key: 'vaultAddr',
    env: 'SVC_VAULT_ADDR',
    flag: 'vault-addr',
    defaultText: '(unset: vault:// references are refused)',
    help: 'HashiCorp Vault address for vault://mount/path#field references (KV version 2), e.g. https://vault.internal:8200',
    parse: optionalMatching(/^https?:\/\/[^\s/?#]{1,255}\/?$/, 'an http(s) URL of scheme, host and optional port'),
  }),
  setting({
    key: 'vaultTokenRef',
    env: 'SVC_VAULT_TOKEN_REF',
    defaultText: '(unset)',
    help: 'secret reference (env://… or secret://…) of the Vault token, never the token itself',
    parse: secretReference,
  }),
  setting({
    key: 'vaultNamespace',
    env: 'SVC_VAULT_NAMESPACE',
    flag: 'vault-namespace',
    defaultText: '(unset)',
    help: 'Vault Enterprise namespace sent as X-Vault-Namespace',
    parse: optionalMatching(/^[A-Za-z0-9_./-]{1,200}$/, 'a Vault namespace such as team/ops'),
  }),
  setting({
    key: 'secretTimeoutMs',
    env: 'SVC_SECRET_TIMEOUT_MS',
    flag: 'secret-timeout-ms',
    defaultText: String(CONFIG_DEFAULTS.secretTimeoutMs),
    help: 'how long one call to a secret manager (aws-sm://, vault://) may take',
    parse: integer(CONFIG_DEFAULTS.secretTimeoutMs, 100, 60_000),
  }),
  setting({
    key: 'secretCacheSeconds',
    env: 'SVC_SECRET_CACHE_SECONDS',
    flag: 'secret-cache-seconds',
    defaultText: String(CONFIG_DEFAULTS.secretCacheSeconds),
    help: 'how long a value fetched from a secret manager is reused (0: fetched at every use); SIGHUP empties the cache',
    parse: integer(CONFIG_DEFAULTS.secretCacheSeconds, 0, 86_400),
  }),
  setting({
    key: 'storeKekRef',
    env: 'SVC_STORE_KEK_REF',
    defaultText: '(unset: a key file made in the data directory, store-kek.key)',
    help: 'secret reference of the 32-byte key-encryption key (base64 or 64 hex digits) that seals the webhook signing keys the service mints; set one shared reference for companions sharing a PostgreSQL database',
    parse: secretReference,
  }),
  setting({
    key: 'storeKekPreviousRefs',
    env: 'SVC_STORE_KEK_PREVIOUS_REFS',
    defaultText: '(none)',
    help: 'comma-separated secret references of earlier key-encryption keys, used only to open values until svc-admin rewrap-secrets has re-sealed them under SVC_STORE_KEK_REF',
    parse: secretReferences,
  }),
  setting({
    key: 'consoleDir',
    env: 'SVC_CONSOLE_DIR',
    defaultText: '(unset: dist/console, built by npm run build)',
    help: 'folder of the built tenant console served at /console',
    parse: optionalText,
  }),
  setting({
    key: 'webhookLeaseSeconds',
    env: 'SVC_WEBHOOK_LEASE_SECONDS',
    flag: 'webhook-lease-seconds',
    defaultText: String(CONFIG_DEFAULTS.webhookLeaseSeconds),
    help: 'how long a delivery worker holds a claimed delivery before another may take it over',
    parse: integer(CONFIG_DEFAULTS.webhookLeaseSeconds, 1, 3600),
  }),
  setting({
    key: 'idempotencyTtlSeconds',
    env: 'SVC_IDEMPOTENCY_TTL_SECONDS',
    flag: 'idempotency-ttl-seconds',
    defaultText: `${CONFIG_DEFAULTS.idempotencyTtlSeconds} (24 h)`,
    help: 'how long an idempotency_key replays its first answer; after it the key is forgotten and purged',
    parse: integer(CONFIG_DEFAULTS.idempotencyTtlSeconds, 60, 365 * 86_400),
  }),
  setting({
    key: 'catalogBureauCode',
    env: 'SVC_CATALOG_BUREAU_CODE',
    defaultText: '(unset)',
    help: 'data-catalog export: OMB Circular A-11 Appendix C agency:bureau code (NNN:NN)',
    parse: optionalMatching(/^\d{3}:\d{2}$/, 'NNN:NN'),
  }),
  setting({
    key: 'catalogProgramCode',
    env: 'SVC_CATALOG_PROGRAM_CODE',
    defaultText: '(unset)',
    help: 'data-catalog export: Federal Program Inventory agency:program code (NNN:NNN)',
    parse: optionalMatching(/^\d{3}:\d{3}$/, 'NNN:NNN'),
  }),
  setting({
    key: 'catalogContactName',
    env: 'SVC_CATALOG_CONTACT_NAME',
    defaultText: '(unset)',
    help: 'data-catalog export: contact point name',
    parse: optionalMatching(/^\S.{0,199}$/, 'a name'),
  }),
  setting({
    key: 'catalogContactEmail',
    env: 'SVC_CATALOG_CONTACT_EMAIL',
    defaultText: '(unset)',
    help: 'data-catalog export: contact point email',
    parse: optionalMatching(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'an email address'),
  }),
  setting({
    key: 'sessionTtlSeconds',
    env: 'SVC_SESSION_TTL_SECONDS',
    flag: 'session-ttl-seconds',
    defaultText: `${CONFIG_DEFAULTS.sessionTtlSeconds} (8 h)`,
    help: 'how long an account session (svc_session cookie) lasts before it must be renewed with an API key',
    parse: integer(CONFIG_DEFAULTS.sessionTtlSeconds, 60, 30 * 86_400),
  }),
  setting({
    key: 'billingProvider',
    env: 'SVC_BILLING_PROVIDER',
    flag: 'billing-provider',
    defaultText: 'local',
    help: 'payment provider for the upgrade to production: local (operator-signed checkout, self-hosting) or stripe',
    parse: oneOf(['local', 'stripe'] as const, 'local'),
  }),
  setting({
    key: 'billingLocalSecretRef',
    env: 'SVC_BILLING_LOCAL_SECRET_REF',
    defaultText: '(unset: local checkout unavailable)',
    help: 'secret reference (env://… or secret://…) of the operator secret that signs local-provider checkouts',
    parse: secretReference,
  }),
  setting({
    key: 'stripeSecretKeyRef',
    env: 'SVC_STRIPE_SECRET_KEY_REF',
    defaultText: '(unset)',
    help: 'secret reference of the Stripe secret key (never the key itself)',
    parse: secretReference,
  }),
  setting({
    key: 'stripeWebhookSecretRef',
    env: 'SVC_STRIPE_WEBHOOK_SECRET_REF',
    defaultText: '(unset)',
    help: 'secret reference of the Stripe webhook signing secret (whsec_…)',
    parse: secretReference,
  }),
  setting({
    key: 'stripePriceId',
    env: 'SVC_STRIPE_PRICE_ID',
    defaultText: '(unset)',
    help: 'Stripe Price id of the production subscription (price_…)',
    parse: optionalMatching(/^price_[A-Za-z0-9]{1,200}$/, 'a Stripe Price id (price_…)'),
  }),
  setting({
    key: 'stripeApiBase',
    env: 'SVC_STRIPE_API_BASE',
    defaultText: '(unset: https://api.stripe.com)',
    help: 'Stripe API base URL override, e.g. http://127.0.0.1:12111 for a local stand-in',
    parse: optionalMatching(/^https?:\/\/[A-Za-z0-9.:\[\]-]+(:\d{1,5})?$/, 'a URL of scheme, host and optional port'),
  }),
  setting({
    key: 'billingReturnUrl',
    env: 'SVC_BILLING_RETURN_URL',
    defaultText: '(unset: http://HOST:PORT/)',
    help: 'where the payment provider sends the person back after checkout or the billing portal',
    parse: optionalMatching(/^https?:\/\/\S{1,2000}$/, 'an http(s) URL'),
  }),
  setting({
    key: 'signer',
    env: 'SVC_SIGNER',
    flag: 'signer',
    defaultText: CONFIG_DEFAULTS.signer,
    help: `production signing custody: ${SIGNER_KINDS.join(', ')} (file is NOT a managed key service)`,
    parse: signerKind,
  }),
  setting({
    key: 'pkcs11Module',
    env: 'SVC_PKCS11_MODULE',
    flag: 'pkcs11-module',
    defaultText: '(unset)',
    help: 'SVC_SIGNER=pkcs11: the PKCS#11 module path, e.g. /usr/lib/softhsm/libsofthsm2.so',
    parse: optionalMatching(/^\S.{0,1023}$/, 'a file path'),
  }),
  setting({
    key: 'pkcs11TokenLabel',
    env: 'SVC_PKCS11_TOKEN_LABEL',
    flag: 'pkcs11-token-label',
    defaultText: '(unset)',
    help: 'SVC_SIGNER=pkcs11: the label of the token holding the key (at most 32 characters)',
    parse: optionalMatching(/^\S.{0,31}$/, 'a token label of 1 to 32 characters'),
  }),
  setting({
    key: 'pkcs11KeyLabel',
    env: 'SVC_PKCS11_KEY_LABEL',
    flag: 'pkcs11-key-label',
    defaultText: CONFIG_DEFAULTS.pkcs11KeyLabel,
    help: 'SVC_SIGNER=pkcs11: the CKA_LABEL of the Ed25519 key pair',
    parse: label(CONFIG_DEFAULTS.pkcs11KeyLabel),
  }),
  setting({
    key: 'pkcs11PinRef',
    env: 'SVC_PKCS11_PIN_REF',
    defaultText: '(unset)',
    help: 'SVC_SIGNER=pkcs11: secret reference to the user PIN (env://NAME or secret://path), never the PIN itself',
    parse: secretReference,
  }),
  setting({
    key: 'pkcs11CreateKey',
    env: 'SVC_PKCS11_CREATE_KEY',
    flag: 'pkcs11-create-key',
    defaultText: '0',
    help: '1: generate a non-extractable Ed25519 key pair on the token when none has the key label',
    parse: boolean,
  }),
  setting({
    key: 'kmsKeyId',
    env: 'SVC_KMS_KEY_ID',
    flag: 'kms-key-id',
    defaultText: '(unset)',
    help: 'SVC_SIGNER=aws-kms: key id, key ARN or alias of an ECC_NIST_EDWARDS25519 SIGN_VERIFY key',
    parse: optionalMatching(/^[A-Za-z0-9:/_.+=,@-]{1,2048}$/, 'a KMS key id, ARN or alias'),
  }),
  setting({
    key: 'kmsRegion',
    env: 'SVC_KMS_REGION',
    flag: 'kms-region',
    defaultText: '(unset)',
    help: 'SVC_SIGNER=aws-kms: the AWS region, e.g. eu-west-1 (credentials come from the SDK\'s usual chain)',
    parse: optionalMatching(/^[a-z0-9-]{1,64}$/, 'an AWS region such as eu-west-1'),
  }),
  setting({
    key: 'kmsEndpoint',
    env: 'SVC_KMS_ENDPOINT',
    flag: 'kms-endpoint',
    defaultText: '(unset: the region\'s public endpoint)',
    help: 'SVC_SIGNER=aws-kms: endpoint override, e.g. a VPC endpoint URL',
    parse: optionalMatching(/^https?:\/\/[^\s]{1,2040}$/, 'an http(s) URL'),
  }),
  setting({
    key: 'kmsTimeoutMs',
    env: 'SVC_KMS_TIMEOUT_MS',
    flag: 'kms-timeout-ms',
    defaultText: String(CONFIG_DEFAULTS.kmsTimeoutMs),
    help: 'SVC_SIGNER=aws-kms: how long one KMS call may hold a seal before it is refused with 503',
    parse: integer(CONFIG_DEFAULTS.kmsTimeoutMs, 100, 60_000),
  }),
] as const satisfies readonly Setting<any>[];


export interface CatalogConfig {
  /** OMB Circular A-11 Appendix C agency:bureau code, e.g. 015:11. */
  bureauCode: string | null;
  /** Federal Program Inventory agency:program code, e.g. 015:001. */
  programCode: string | null;
  contactName: string | null;
  contactEmail: string | null;
}

/** The DCAT-US federal fields, as the data-catalog export reads them. */
export function catalogConfig(config: Config): CatalogConfig {
  return {
    bureauCode: config.catalogBureauCode,
    programCode: config.catalogProgramCode,
    contactName: config.catalogContactName,
    contactEmail: config.catalogContactEmail,
  };
}

export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  argv: readonly string[] = process.argv.slice(2),
  cwd: string = process.cwd(),
): Config {
  const problems: string[] = [];
  const flags = parseFlags(argv, problems);
  const config = {} as Record<keyof Config, unknown>;
  for (const s of SETTINGS as readonly Setting[]) {
    const raw = (s.flag !== undefined ? flags[s.flag] : undefined) ?? env[s.env];
    config[s.key] = s.parse(raw, s.flag !== undefined && flags[s.flag] !== undefined ? `--${s.flag}` : s.env, problems);
  }
  signerProblems(config as Config, problems);
  secretProblems(config as Config, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  const out = config as Config;
  out.dataDir = path.resolve(cwd, out.dataDir);
  if (out.publicBaseUrl === '') {
    // Unset: the listening address; a wildcard as loopback, the address that reaches it from this machine.
    const listen = out.host === '0.0.0.0' || out.host === '::' ? '127.0.0.1' : out.host;
    out.publicBaseUrl = `http://${listen.includes(':') ? `[${listen}]` : listen}:${out.port}`;
  }
  if (out.secretRefMapFile !== undefined) out.secretRefMapFile = path.resolve(cwd, out.secretRefMapFile);
  if (out.secretGrantsFile !== undefined) out.secretGrantsFile = path.resolve(cwd, out.secretGrantsFile);
  if (out.consoleDir !== undefined) out.consoleDir = path.resolve(cwd, out.consoleDir);
  if (out.tsaRootsFile !== undefined) out.tsaRootsFile = path.resolve(cwd, out.tsaRootsFile);
  if (out.witnessesFile !== undefined) out.witnessesFile = path.resolve(cwd, out.witnessesFile);
  return out;
}

/** The command line's own options, beside the settings' flags. */
export const COMMAND_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

function parseFlags(argv: readonly string[], problems: string[]): Record<string, string | undefined> {
  const options: Record<string, { type: 'string' } | { type: 'boolean'; short?: string }> = { ...COMMAND_OPTIONS };
  for (const s of SETTINGS as readonly Setting[]) if (s.flag) options[s.flag] = { type: 'string' };
  try {
    const { values } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false });
    return Object.fromEntries(Object.entries(values).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
  } catch (err) {
    // util.parseArgs names the offending argument and, for unknown options, the fix.
    problems.push((err as Error).message);
    return {};
  }
}

/** `--help`: every setting with its variable, flag and default. */
export function settingsHelp(): string {
  const rows = (SETTINGS as readonly Setting[]).map((s) => [s.env, s.flag ? `--${s.flag}` : '(env only)', s.defaultText, s.reserved ? `${s.help} [reserved: ${s.reserved}]` : s.help]);
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => `  ${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padEnd(widths[1]!)}  ${r[2]!.padEnd(widths[2]!)}  ${r[3]}`).join('\n');
}

/** The settings the chosen SVC_SIGNER cannot start without. */
function signerProblems(c: Config, problems: string[]): void {
  const required: Partial<Record<SignerKind, [string, unknown][]>> = {
    pkcs11: [['SVC_PKCS11_MODULE', c.pkcs11Module], ['SVC_PKCS11_TOKEN_LABEL', c.pkcs11TokenLabel], ['SVC_PKCS11_PIN_REF', c.pkcs11PinRef]],
    'aws-kms': [['SVC_KMS_KEY_ID', c.kmsKeyId], ['SVC_KMS_REGION', c.kmsRegion]],
  };
  for (const [name, value] of required[c.signer] ?? []) {
    if (value === null) problems.push(`SVC_SIGNER=${c.signer} needs ${name}`);
  }
}

/**
 * The settings that only make sense together: a grant table, or a reference the service
 * resolves for itself, in a scheme with no provider would be accepted and never resolve, so it
 * is refused here. A value that did not parse is skipped: its own problem is reported already.
 */
function secretProblems(c: Config, problems: string[]): void {
  if (Object.keys(c.secretGrants).length > 0 && c.secretGrantsFile !== undefined) {
    // Two sources would need a precedence rule an operator must remember; one is clearer.
    problems.push('SVC_SECRET_GRANTS and SVC_SECRET_GRANTS_FILE are both set: set one (the file is re-read on SIGHUP)');
  }
  problems.push(...grantProblems(c.secretGrants, 'SVC_SECRET_GRANTS', c));
  if (c.awsSmEndpoint !== null && c.awsSmRegion === null) problems.push('SVC_AWS_SM_ENDPOINT needs SVC_AWS_SM_REGION (the region signs every request)');
  if (c.vaultAddr !== null && c.vaultTokenRef === null) problems.push('SVC_VAULT_ADDR needs SVC_VAULT_TOKEN_REF (a secret reference to the Vault token)');
  if (c.vaultAddr === null && (c.vaultTokenRef !== null || c.vaultNamespace !== null)) problems.push('SVC_VAULT_TOKEN_REF and SVC_VAULT_NAMESPACE need SVC_VAULT_ADDR');
  const operatorRefs: [string, string | null][] = [
    ['SVC_BILLING_LOCAL_SECRET_REF', c.billingLocalSecretRef],
    ['SVC_STRIPE_SECRET_KEY_REF', c.stripeSecretKeyRef],
    ['SVC_STRIPE_WEBHOOK_SECRET_REF', c.stripeWebhookSecretRef],
    ['SVC_PKCS11_PIN_REF', c.pkcs11PinRef],
    ['SVC_VAULT_TOKEN_REF', c.vaultTokenRef],
    ['SVC_STORE_KEK_REF', c.storeKekRef],
    ...c.storeKekPreviousRefs.map((r): [string, string] => ['SVC_STORE_KEK_PREVIOUS_REFS', r]),
  ];
  if (c.storeKekPreviousRefs.length > 0 && c.storeKekRef === null) {
    problems.push('SVC_STORE_KEK_PREVIOUS_REFS needs SVC_STORE_KEK_REF (the key values are re-wrapped under)');
  }
  for (const [name, value] of operatorRefs) {
    const ref = value === null ? undefined : parseSecretRef(value);
    if (ref === undefined) continue;
    // The Vault token opens Vault: it cannot itself live there.
    if (name === 'SVC_VAULT_TOKEN_REF' && ref.scheme === 'vault') problems.push(`${name} cannot be a vault:// reference: the token is what reads Vault`);
    else if (!schemeAvailable(ref.scheme, c)) problems.push(`${name} is a ${ref.scheme}:// reference this service cannot resolve (${unavailableReason(ref.scheme)})`);
  }
  if (c.billingProvider === 'stripe') {
    // The webhook secret is optional: completing a checkout retrieves the session itself.
    for (const [name, value] of [['SVC_STRIPE_SECRET_KEY_REF', c.stripeSecretKeyRef], ['SVC_STRIPE_PRICE_ID', c.stripePriceId]] as const) {
      if (value === null) problems.push(`SVC_BILLING_PROVIDER=stripe needs ${name}`);
    }
  }
}

function signerKind(raw: Raw, name: string, problems: string[]): SignerKind {
  const value = (raw ?? '').trim();
  if (value === '') return CONFIG_DEFAULTS.signer;
  if ((SIGNER_KINDS as readonly string[]).includes(value)) return value as SignerKind;
  problems.push(`${name} must be one of ${SIGNER_KINDS.join(', ')}, got ${JSON.stringify(raw)}`);
  return CONFIG_DEFAULTS.signer;
}

function label(fallback: string): Parse<string> {
  return (raw, name, problems) => {
    if (raw === undefined || raw.trim() === '') return fallback;
    if (!/^\S.{0,127}$/.test(raw)) problems.push(`${name} must be 1 to 128 characters, got ${JSON.stringify(raw)}`);
    return raw;
  };
}

/** A secret setting given as a reference; the value is never echoed (it may be the secret). */
function secretReference(raw: Raw, name: string, problems: string[]): string | null {
  if (raw === undefined || raw.trim() === '') return null;
  const value = raw.trim();
  if (parseSecretRef(value) === undefined) problems.push(`${name} must be a secret reference (env://NAME, secret://path, aws-sm://name or vault://mount/path#field), never the secret itself`);
  return value;
}

/** Comma-separated secret references (none when unset); no value is echoed. */
function secretReferences(raw: Raw, name: string, problems: string[]): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const refs = raw.split(',').map((r) => r.trim()).filter((r) => r !== '');
  refs.forEach((ref, i) => {
    if (parseSecretRef(ref) === undefined) problems.push(`${name} entry ${i + 1} must be a secret reference (env://NAME, secret://path, aws-sm://name or vault://mount/path#field), never the secret itself`);
  });
  return refs;
}

/** A JSON object of string arrays, e.g. SVC_SECRET_GRANTS='{"ten_…":["env://HOOK_KEY"]}'. */
function stringArrays(raw: Raw, name: string, problems: string[]): Record<string, string[]> {
  if (raw === undefined || raw.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  const ok =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) &&
    Object.values(parsed).every((v) => Array.isArray(v) && v.every((s) => typeof s === 'string'));
  if (!ok) {
    problems.push(`${name} must be a JSON object whose values are arrays of strings`);
    return {};
  }
  return parsed as Record<string, string[]>;
}

/** An http(s) origin without credentials, path, query or fragment; '' when unset (loadConfig fills it). */
function baseUrl(raw: Raw, name: string, problems: string[]): string {
  const value = raw?.trim() ?? '';
  if (value === '') return '';
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password || url.search || url.hash || url.pathname !== '/') {
    problems.push(`${name}: expected an http(s) origin such as https://gate.example.com, with no path, query or credentials`);
    return '';
  }
  return url.origin;
}

/** Exact IP addresses (node:net isIP), IPv4-mapped IPv6 as its IPv4 form, as the socket reports them. */
function ipList(raw: Raw, name: string, problems: string[]): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const out: string[] = [];
  for (const part of raw.split(',').map((p) => p.trim())) {
    if (isIP(part) === 0) {
      problems.push(`${name} must be a comma-separated list of IP addresses, e.g. 127.0.0.1,::1`);
      return [];
    }
    out.push(part.toLowerCase().replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1'));
  }
  return out;
}

/** Absolute http(s) URLs without credentials or fragment, at most 8 (the address rules apply at send time). */
function tsaUrls(raw: Raw, name: string, problems: string[]): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const out: string[] = [];
  for (const part of raw.split(',').map((p) => p.trim())) {
    let url: URL | undefined;
    try {
      url = new URL(part);
    } catch {
      url = undefined;
    }
    if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password || url.hash || part.length > 2000) {
      problems.push(`${name} must be a comma-separated list of http(s) URLs without credentials, e.g. https://tsa.example.com/tsr`);
      return [];
    }
    if (!out.includes(url.href)) out.push(url.href);
  }
  if (out.length > 8) {
    problems.push(`${name} names ${out.length} authorities; at most 8`);
    return [];
  }
  return out;
}

/** SVC_WITNESSES: a JSON array of {name, url, key} (shared/witness.ts parseWitnessList); no value is echoed. */
function witnessList(raw: Raw, name: string, problems: string[]): WitnessSetting[] {
  if (raw === undefined || raw.trim() === '') return [];
  const r = parseWitnessList(raw, name);
  problems.push(...r.problems);
  return r.witnesses.map((w) => ({ name: w.name, url: w.url, key: w.key.vkey }));
}

function optionalText(raw: Raw): string | undefined {
  return raw === undefined || raw.trim() === '' ? undefined : raw;
}

function integer(fallback: number, min: number, max: number): Parse<number> {
  return (raw, name, problems) => {
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return Number(raw);
  };
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['', '0', 'false', 'no', 'off']);

/** Boolean operator switches: anything but a recognised spelling is an error, never "off". */
function boolean(raw: Raw, name: string, problems: string[]): boolean {
  const value = (raw ?? '').trim().toLowerCase();
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  problems.push(`${name} must be 1 or 0 (or true/false), got ${JSON.stringify(raw)}`);
  return false;
}

/** A boolean whose unset (or empty) value is `fallback`. */
function booleanOr(fallback: boolean): Parse<boolean> {
  return (raw, name, problems) => (raw === undefined || raw.trim() === '' ? fallback : boolean(raw, name, problems));
}

function oneOf<T extends string>(values: readonly T[], fallback: T): Parse<T> {
  return (raw, name, problems) => {
    const value = raw?.trim().toLowerCase();
    if (value === undefined || value === '') return fallback;
    if ((values as readonly string[]).includes(value)) return value as T;
    problems.push(`${name} must be one of ${values.join(', ')}, got ${JSON.stringify(raw)}`);
    return fallback;
  };
}

function nonEmpty(fallback: string): Parse<string> {
  return (raw, name, problems) => {
    if (raw === undefined) return fallback;
    if (raw.trim() === '') {
      problems.push(`${name} must not be empty`);
      return fallback;
    }
    return raw;
  };
}

/** An optional setting that must match `pattern` when given; null when unset. */
function optionalMatching(pattern: RegExp, expected: string): Parse<string | null> {
  return (raw, name, problems) => {
    const value = raw?.trim();
    if (value === undefined || value === '') return null;
    if (!pattern.test(value)) problems.push(`${name} must be ${expected}, got ${JSON.stringify(raw)}`);
    return value;
  };
}

function databaseUrl(raw: Raw, name: string, problems: string[]): string | undefined {
  const value = raw?.trim();
  if (value === undefined || value === '') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    problems.push(`${name} must be a postgres:// URL, got ${JSON.stringify(raw)}`);
    return undefined;
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') problems.push(`${name} must be a postgres:// URL, got ${url.protocol}//…`);
  // A password in the URL would sit in the environment, the process list and logs.
  if (url.password !== '') problems.push(`${name} must not carry a password: set PGPASSWORD instead`);
  return value;
}

function host(raw: Raw, name: string, problems: string[]): string {
  const value = nonEmpty(CONFIG_DEFAULTS.host)(raw, name, problems).trim();
  // A host name or an IP literal; a URL or a port here is a common slip worth catching early.
  if (!/^[A-Za-z0-9.:-]+$/.test(value) || value.includes('://')) {
    problems.push(`${name} must be a host name or IP address, got ${JSON.stringify(raw)}`);
  }
  return value;
}

function logLevel(raw: Raw, name: string, problems: string[]): LogLevel {
  if (raw === undefined || raw === '') return CONFIG_DEFAULTS.logLevel;
  const value = raw.trim().toLowerCase();
  if ((LOG_LEVELS as readonly string[]).includes(value)) return value as LogLevel;
  problems.push(`${name} must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(raw)}`);
  return CONFIG_DEFAULTS.logLevel;
}

function token(raw: Raw, name: string, problems: string[]): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  // The value itself is never echoed: it is a secret even when malformed.
  if (!/^[\x21-\x7e]{16,256}$/.test(raw)) problems.push(`${name} must be 16 to 256 visible ASCII characters`);
  return raw;
}
