/**
 * SVC_SIGNER=pkcs11 against a real SoftHSM2 token in a temporary directory (Debian softhsm2,
 * installed by .ci/run): the key is generated on the token, never extractable, and every
 * production seal it signs verifies online and offline.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pkcs11js from 'pkcs11js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { keyId } from '../../shared/keys.ts';
import { createTestContext, makeTempDir } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { expectSealRefused, sealProductionAndVerify } from './signer-fixtures.ts';

const MODULE = '/usr/lib/softhsm/libsofthsm2.so';
const TOKEN = 'svc-test';
const PIN = '5678';
const PIN_VARIABLE = 'SVC_TEST_PKCS11_PIN';
const CKK_EC_EDWARDS = 0x40;
const CKM_EC_EDWARDS_KEY_PAIR_GEN = 0x1055;

let tokenDir: string;
const saved = { conf: process.env.SOFTHSM2_CONF, pin: process.env[PIN_VARIABLE] };

beforeAll(() => {
  tokenDir = makeTempDir('svc-softhsm-');
  fs.mkdirSync(path.join(tokenDir, 'tokens'));
  const conf = path.join(tokenDir, 'softhsm2.conf');
  fs.writeFileSync(conf, `directories.tokendir = ${path.join(tokenDir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  // SoftHSM2 reads SOFTHSM2_CONF at C_Initialize, so this must precede every signer.
  process.env.SOFTHSM2_CONF = conf;
  process.env[PIN_VARIABLE] = PIN;
  execFileSync('softhsm2-util', ['--init-token', '--free', '--label', TOKEN, '--so-pin', '1234', '--pin', PIN], { stdio: 'ignore' });
});
afterAll(() => {
  for (const [name, value] of [['SOFTHSM2_CONF', saved.conf], [PIN_VARIABLE, saved.pin]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  fs.rmSync(tokenDir, { recursive: true, force: true });
});

const contexts: TestContext[] = [];
afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close();
});

function pkcs11Env(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    SVC_SIGNER: 'pkcs11',
    SVC_PKCS11_MODULE: MODULE,
    SVC_PKCS11_TOKEN_LABEL: TOKEN,
    SVC_PKCS11_KEY_LABEL: 'receipts',
    SVC_PKCS11_PIN_REF: `env://${PIN_VARIABLE}`,
    ...overrides,
  };
}

async function start(env: Record<string, string>): Promise<TestContext> {
  const ctx = await createTestContext({ env });
  contexts.push(ctx);
  return ctx;
}

/**
 * The test's own session on the token, as another application of the same process would have
 * one. It does not finalize the library: the companion's signer may share it.
 */
function withToken<T>(fn: (lib: pkcs11js.PKCS11, session: Buffer) => T): T {
  const { lib, slot } = tokenSlot();
  const session = lib.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
  try {
    try {
      lib.C_Login(session, pkcs11js.CKU_USER, PIN);
    } catch (err) {
      if ((err as pkcs11js.Pkcs11Error).code !== pkcs11js.CKR_USER_ALREADY_LOGGED_IN) throw err;
    }
    return fn(lib, session);
  } finally {
    lib.C_CloseSession(session);
  }
}

/**
 * Ends every session this process has on the token (C_CloseAllSessions, PKCS#11 §5.6), as a
 * token reset or an HSM failover does: the signer's session handle is then invalid and its login
 * gone. SoftHSM2 is loaded once per process, so the test's handle and the signer's are one.
 */
function closeAllSessions(): void {
  const { lib, slot } = tokenSlot();
  lib.C_CloseAllSessions(slot);
}

/** The module, initialised (or found initialised by the signer), and the test token's slot. */
function tokenSlot(): { lib: pkcs11js.PKCS11; slot: Buffer } {
  const lib = new pkcs11js.PKCS11();
  lib.load(MODULE);
  try {
    lib.C_Initialize();
  } catch (err) {
    if ((err as pkcs11js.Pkcs11Error).code !== pkcs11js.CKR_CRYPTOKI_ALREADY_INITIALIZED) throw err;
  }
  return { lib, slot: lib.C_GetSlotList(true).find((s) => lib.C_GetTokenInfo(s).label.trim() === TOKEN)! };
}

/** A fresh Ed25519 key pair on the token under `label`: non-exportable unless asked otherwise. */
function generateOnToken(lib: pkcs11js.PKCS11, session: Buffer, label: string, { exportable = false } = {}): void {
  const common = [{ type: pkcs11js.CKA_KEY_TYPE, value: CKK_EC_EDWARDS }, { type: pkcs11js.CKA_TOKEN, value: true }, { type: pkcs11js.CKA_LABEL, value: label }];
  lib.C_GenerateKeyPair(
    session,
    { mechanism: CKM_EC_EDWARDS_KEY_PAIR_GEN },
    [...common, { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY }, { type: pkcs11js.CKA_VERIFY, value: true }, { type: pkcs11js.CKA_EC_PARAMS, value: Buffer.from('06032b6570', 'hex') }],
    [
      ...common,
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
      { type: pkcs11js.CKA_PRIVATE, value: true },
      { type: pkcs11js.CKA_SENSITIVE, value: !exportable },
      { type: pkcs11js.CKA_EXTRACTABLE, value: exportable },
      { type: pkcs11js.CKA_SIGN, value: true },
    ],
  );
}

function findByLabel(lib: pkcs11js.PKCS11, session: Buffer, objectClass: number, label: string): Buffer {
  lib.C_FindObjectsInit(session, [{ type: pkcs11js.CKA_CLASS, value: objectClass }, { type: pkcs11js.CKA_LABEL, value: label }]);
  const [handle] = lib.C_FindObjects(session, 1);
  lib.C_FindObjectsFinal(session);
  if (!handle) throw new Error(`no object labelled ${label}`);
  return handle;
}

describe('SVC_SIGNER=pkcs11 (SoftHSM2)', () => {
  it('generates a non-extractable Ed25519 key on the token and signs production seals that verify online and offline', async () => {
    const ctx = await start(pkcs11Env({ SVC_PKCS11_CREATE_KEY: '1' }));
    const sealKeyId = await sealProductionAndVerify(ctx);

    // The key_id is the RFC 7638 thumbprint of the token's public key (CKA_EC_POINT, 04 20 + 32 bytes).
    const point = withToken((lib, s) => lib.C_GetAttributeValue(s, findByLabel(lib, s, pkcs11js.CKO_PUBLIC_KEY, 'receipts'), [{ type: pkcs11js.CKA_EC_POINT }])[0]!.value as Buffer);
    expect(point.length).toBe(34);
    expect(sealKeyId).toBe(keyId(new Uint8Array(point.subarray(2))));
    expect(ctx.deps.keyring.production.keyId).toBe(sealKeyId);

    // The private key's value cannot be read off the token.
    const readValue = () =>
      withToken((lib, s) => lib.C_GetAttributeValue(s, findByLabel(lib, s, pkcs11js.CKO_PRIVATE_KEY, 'receipts'), [{ type: pkcs11js.CKA_VALUE }]));
    expect(readValue).toThrow(expect.objectContaining({ code: pkcs11js.CKR_ATTRIBUTE_SENSITIVE }));

    // Readiness probes the token signer too.
    const ready = await ctx.request('/readyz');
    expect(ready.status).toBe(200);

    // The signer plan reports the managed custody, with locators and no PIN.
    const plan = await ctx.request('/deployment/signer-plan');
    expect(plan.status).toBe(200);
    expect(plan.body.production_custody_managed).toBe(true);
    expect(plan.body.signers).toContainEqual(
      expect.objectContaining({
        role: 'production',
        kind: 'pkcs11',
        managed: true,
        non_exportable: true,
        key_id: sealKeyId,
        algorithm: 'Ed25519',
        locators: { module: MODULE, token_label: TOKEN, key_label: 'receipts' },
      }),
    );
    expect(plan.body.next_steps.join(' ')).toMatch(/SoftHSM2 is a software token/);
    expect(plan.text).not.toContain(PIN_VARIABLE);
  });

  it('finds the same key by label after a restart, without creating another', async () => {
    const first = await start(pkcs11Env({ SVC_PKCS11_CREATE_KEY: '1' }));
    const id = first.deps.keyring.production.keyId;
    await first.close();
    contexts.splice(contexts.indexOf(first), 1);
    const again = await start(pkcs11Env());
    expect(again.deps.keyring.production.keyId).toBe(id);
    expect(await sealProductionAndVerify(again)).toBe(id);
  });

  it('opens a new session and logs in again when the token ended its sessions, and signs on with the same key', async () => {
    const ctx = await start(pkcs11Env({ SVC_PKCS11_CREATE_KEY: '1', SVC_PKCS11_KEY_LABEL: 'reopened' }));
    const id = await sealProductionAndVerify(ctx);
    closeAllSessions();
    expect(await sealProductionAndVerify(ctx)).toBe(id);
    closeAllSessions();
    expect(await sealProductionAndVerify(ctx)).toBe(id);
    expect((await ctx.request('/readyz')).status).toBe(200);
    expect(ctx.log.entries).toContainEqual(expect.objectContaining({ level: 'warn', message: 'PKCS#11 session reopened' }));
  });

  it('never signs with another key found under the label after a lost session: it refuses, and signs again once the key is back', async () => {
    const ctx = await start(pkcs11Env({ SVC_PKCS11_CREATE_KEY: '1', SVC_PKCS11_KEY_LABEL: 'swapped' }));
    const id = await sealProductionAndVerify(ctx);
    // The label now names a different key pair: the original is relabelled, a new one takes its place.
    withToken((lib, s) => {
      for (const objectClass of [pkcs11js.CKO_PRIVATE_KEY, pkcs11js.CKO_PUBLIC_KEY]) {
        lib.C_SetAttributeValue(s, findByLabel(lib, s, objectClass, 'swapped'), [{ type: pkcs11js.CKA_LABEL, value: 'swapped-original' }]);
      }
      generateOnToken(lib, s, 'swapped');
    });
    closeAllSessions();
    await expectSealRefused(ctx);
    const refused = ctx.log.entries.find((e) => e.message === 'PKCS#11 session not reopened');
    expect(JSON.stringify(refused?.fields)).toMatch(/is not the key this service started with/);

    // The original key back under its label: the next seal reopens and signs with it.
    withToken((lib, s) => {
      for (const objectClass of [pkcs11js.CKO_PRIVATE_KEY, pkcs11js.CKO_PUBLIC_KEY]) {
        lib.C_DestroyObject(s, findByLabel(lib, s, objectClass, 'swapped'));
        lib.C_SetAttributeValue(s, findByLabel(lib, s, objectClass, 'swapped-original'), [{ type: pkcs11js.CKA_LABEL, value: 'swapped' }]);
      }
    });
    expect(await sealProductionAndVerify(ctx)).toBe(id);
  });

  it('refuses to start with an extractable or non-sensitive key', async () => {
    withToken((lib, s) => generateOnToken(lib, s, 'exportable', { exportable: true }));
    await expect(start(pkcs11Env({ SVC_PKCS11_KEY_LABEL: 'exportable' }))).rejects.toThrow(
      /refusing the PKCS#11 key labelled "exportable": CKA_EXTRACTABLE is true and CKA_SENSITIVE is false/,
    );
  });

  it('refuses a missing key unless told to create one, an unknown token and an unresolvable PIN reference', async () => {
    await expect(start(pkcs11Env({ SVC_PKCS11_KEY_LABEL: 'nobody' }))).rejects.toThrow(/no Ed25519 key pair labelled "nobody".*SVC_PKCS11_CREATE_KEY=1/);
    await expect(start(pkcs11Env({ SVC_PKCS11_TOKEN_LABEL: 'elsewhere' }))).rejects.toThrow(/no PKCS#11 token labelled "elsewhere" \(tokens present: "svc-test"\)/);
    await expect(start(pkcs11Env({ SVC_PKCS11_PIN_REF: 'env://SVC_TEST_NO_SUCH_PIN' }))).rejects.toThrow(/SVC_PKCS11_PIN_REF env:\/\/SVC_TEST_NO_SUCH_PIN cannot be resolved: not_found/);
  });

  it('takes the PIN only as a secret reference, and names every missing setting', async () => {
    let message = '';
    try {
      await start({ SVC_SIGNER: 'pkcs11', SVC_PKCS11_PIN_REF: PIN });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/SVC_PKCS11_PIN_REF must be a secret reference/);
    expect(message).toMatch(/SVC_SIGNER=pkcs11 needs SVC_PKCS11_MODULE/);
    expect(message).toMatch(/SVC_SIGNER=pkcs11 needs SVC_PKCS11_TOKEN_LABEL/);
    expect(message).not.toContain(PIN);
  });
});
