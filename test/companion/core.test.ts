/** Small core pieces: configuration, ULIDs, the clock and the lifecycle. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../companion/core/clock.ts';
import { CONFIG_DEFAULTS, ConfigError, catalogConfig, loadConfig } from '../../companion/core/config.ts';
import { ULID_PATTERN, createIdFactory, ulidTime } from '../../companion/core/ids.ts';
import { Lifecycle } from '../../companion/core/lifecycle.ts';

describe('loadConfig', () => {
  it('has the defaults of DESIGN.md §2', () => {
    const c = loadConfig({}, [], '/srv');
    expect(c).toEqual({
      port: 8787,
      publicBaseUrl: 'http://127.0.0.1:8787',
      trustProxy: [],
      signupRatePerMinute: 30,
      host: '127.0.0.1',
      dataDir: path.resolve('/srv', '.svc-data'),
      logLevel: 'info',
      metricsToken: undefined,
      epochSeconds: 3600,
      tsaUrls: [],
      tsaRootsFile: undefined,
      witnesses: [],
      witnessesFile: undefined,
      webhookAllowLoopback: false,
      outboxExternalSend: false,
      sealThread: true,
      maxBodyBytes: CONFIG_DEFAULTS.maxBodyBytes,
      shutdownGraceMs: CONFIG_DEFAULTS.shutdownGraceMs,
      reviewTimeoutSeconds: 72 * 3600,
      secretGrants: {},
      secretGrantsFile: undefined,
      secretRefMapFile: undefined,
      awsSmRegion: null,
      awsSmEndpoint: null,
      vaultAddr: null,
      vaultTokenRef: null,
      vaultNamespace: null,
      secretTimeoutMs: 2000,
      secretCacheSeconds: 60,
      storeKekRef: null,
      storeKekPreviousRefs: [],
      webhookLeaseSeconds: 60,
      catalogBureauCode: null,
      catalogProgramCode: null,
      catalogContactName: null,
      catalogContactEmail: null,
      idempotencyTtlSeconds: 24 * 3600,
      sessionTtlSeconds: 8 * 3600,
      billingProvider: 'local',
      billingLocalSecretRef: null,
      stripeSecretKeyRef: null,
      stripeWebhookSecretRef: null,
      stripePriceId: null,
      stripeApiBase: null,
      billingReturnUrl: null,
      signer: 'file',
      pkcs11Module: null,
      pkcs11TokenLabel: null,
      pkcs11KeyLabel: 'svc-production-ed25519',
      pkcs11PinRef: null,
      pkcs11CreateKey: false,
      kmsKeyId: null,
      kmsRegion: null,
      kmsEndpoint: null,
      kmsTimeoutMs: 2000,
    });
  });

  it('reads the data-catalog settings and refuses malformed federal codes', () => {
    const env = { SVC_CATALOG_BUREAU_CODE: '015:11', SVC_CATALOG_PROGRAM_CODE: '015:001', SVC_CATALOG_CONTACT_NAME: 'Desk', SVC_CATALOG_CONTACT_EMAIL: 'desk@example.gov' };
    expect(catalogConfig(loadConfig(env, [], '/srv'))).toEqual({ bureauCode: '015:11', programCode: '015:001', contactName: 'Desk', contactEmail: 'desk@example.gov' });
    expect(() => loadConfig({ SVC_CATALOG_BUREAU_CODE: '15:11', SVC_CATALOG_CONTACT_EMAIL: 'nobody' }, [], '/srv')).toThrow(/SVC_CATALOG_BUREAU_CODE must be NNN:NN[\s\S]*SVC_CATALOG_CONTACT_EMAIL must be an email address/);
  });

  it('reads the environment, and flags win over it', () => {
    const env = { PORT: '9000', HOST: '::1', SVC_DATA_DIR: '/data', SVC_EPOCH_SECONDS: '5', SVC_WEBHOOK_ALLOW_LOOPBACK: '1', SVC_OUTBOX_EXTERNAL_SEND: 'true', SVC_MAX_BODY_BYTES: '4096' };
    const c = loadConfig(env, ['--port', '9100', '--data-dir=/other'], '/srv');
    expect(c).toMatchObject({ port: 9100, host: '::1', dataDir: '/other', epochSeconds: 5, webhookAllowLoopback: true, outboxExternalSend: true, maxBodyBytes: 4096 });
  });

  it('fails fast listing every invalid value', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: '70000', SVC_EPOCH_SECONDS: '0', SVC_OUTBOX_EXTERNAL_SEND: 'maybe', HOST: 'http://x', SVC_SECRET_GRANTS: '{"ten_1":"env://X"}' }, ['--bogus']);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['PORT', 'SVC_EPOCH_SECONDS', 'SVC_OUTBOX_EXTERNAL_SEND', 'HOST', 'SVC_SECRET_GRANTS', '--bogus']) expect(problems).toContain(name);
  });
});

describe('ULID ids', () => {
  it('are 26 Crockford base32 characters carrying the clock millisecond', () => {
    const clock = new ManualClock('2025-06-01T12:00:00.123Z');
    const ids = createIdFactory(clock);
    const id = ids.next('ten');
    expect(id).toMatch(/^ten_/);
    expect(id.slice(4)).toMatch(ULID_PATTERN);
    expect(ulidTime(id)).toBe(clock.now().getTime());
  });

  it('sort in creation order within one millisecond and when the clock steps back', () => {
    const clock = new ManualClock('2025-06-01T12:00:00.000Z');
    const ids = createIdFactory(clock);
    const made: string[] = [];
    for (let i = 0; i < 1000; i++) made.push(ids.ulid());
    clock.advance(-5000);
    for (let i = 0; i < 10; i++) made.push(ids.ulid());
    clock.advance(10_000);
    made.push(ids.ulid());
    expect([...made].sort()).toEqual(made);
    expect(new Set(made).size).toBe(made.length);
  });

  it('carry into the time part when the random part overflows', () => {
    const clock = new ManualClock(1000);
    const ids = createIdFactory(clock, (b) => b.fill(0xff));
    const a = ids.ulid();
    const b = ids.ulid();
    expect(b > a).toBe(true);
    expect(ulidTime(b)).toBe(1001);
  });
});

describe('Lifecycle', () => {
  it('starts hooks in order, stops them in reverse, and runs every stop hook even if one fails', async () => {
    const order: string[] = [];
    const life = new Lifecycle();
    life.onStart(() => void order.push('start a'));
    life.onStart(() => void order.push('start b'));
    life.onStop(() => void order.push('stop a'));
    life.onStop(() => {
      order.push('stop b');
      throw new Error('b failed');
    });
    await life.start();
    await expect(life.stop()).rejects.toThrow('b failed');
    expect(order).toEqual(['start a', 'start b', 'stop b', 'stop a']);
    await life.stop(); // idempotent
    expect(order).toHaveLength(4);
  });
});
