/**
 * Settings fail fast (core/config.ts, core/settings-check.ts, main.ts): every setting that
 * names a file, a folder, a secret reference or a provider is checked when the real process
 * starts; a bad one stops it with exit code 2 and one line naming the setting and the problem,
 * never a secret value, before anything listens.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupCompanions, launch, tempDataDir } from '../helpers/companion-process.ts';

afterEach(cleanupCompanions);

function file(name: string, content: string): string {
  const f = path.join(tempDataDir(), name);
  fs.writeFileSync(f, content, { mode: 0o600 });
  return f;
}

/** Starts the companion with `env`; expects exit 2 and exactly one problem line matching `line`. */
async function refused(env: Record<string, string>, line: RegExp): Promise<string> {
  const p = launch(tempDataDir(), env);
  const { code } = await p.exited;
  const problems = p.stderr().split('\n').filter((l) => l.startsWith('  - '));
  expect({ code, problems }, p.stderr()).toEqual({ code: 2, problems: [expect.stringMatching(line)] });
  expect(p.stdout()).not.toContain('listening');
  return p.stderr();
}

const RAW_SECRET = 'sk_live_0123456789abcdefRAW';

// One case per setting: [name, environment, the line].
const CASES: [string, () => Record<string, string>, RegExp][] = [
  ['SVC_SECRET_REF_MAP_FILE missing', () => ({ SVC_SECRET_REF_MAP_FILE: '/nonexistent/refs.json' }), /^ {2}- SVC_SECRET_REF_MAP_FILE cannot be read \(ENOENT\): \/nonexistent\/refs\.json$/],
  ['SVC_SECRET_REF_MAP_FILE not an object', () => ({ SVC_SECRET_REF_MAP_FILE: file('refs.json', '["secret://a"]') }), /^ {2}- SVC_SECRET_REF_MAP_FILE must be a JSON object of secret:\/\/… reference → string$/],
  ['SVC_SECRET_REF_MAP_FILE value not a string', () => ({ SVC_SECRET_REF_MAP_FILE: file('refs.json', '{"secret://a/b": 42}') }), /^ {2}- SVC_SECRET_REF_MAP_FILE must map each reference to a string; 1 value\(s\) are not strings$/],
  ['SVC_SECRET_GRANTS_FILE missing', () => ({ SVC_SECRET_GRANTS_FILE: '/nonexistent/grants.json' }), /^ {2}- SVC_SECRET_GRANTS_FILE cannot be read \(ENOENT\)/],
  ['SVC_SECRET_GRANTS_FILE malformed', () => ({ SVC_SECRET_GRANTS_FILE: file('grants.json', '{"ten_a": "env://X"}') }), /^ {2}- SVC_SECRET_GRANTS_FILE must be a JSON object whose values are arrays of strings$/],
  ['SVC_SECRET_GRANTS_FILE with an unresolvable scheme', () => ({ SVC_SECRET_GRANTS_FILE: file('grants.json', '{"*": ["azure-kv://vault/key"]}') }), /^ {2}- SVC_SECRET_GRANTS_FILE\["\*"\] grants azure-kv:\/\/ references this service cannot resolve/],
  ['SVC_SECRET_GRANTS and SVC_SECRET_GRANTS_FILE both', () => ({ SVC_SECRET_GRANTS: '{"*":["env://X"]}', SVC_SECRET_GRANTS_FILE: file('grants.json', '{}') }), /^ {2}- SVC_SECRET_GRANTS and SVC_SECRET_GRANTS_FILE are both set/],
  ['SVC_SECRET_GRANTS with gcp-sm://', () => ({ SVC_SECRET_GRANTS: '{"ten_a":["gcp-sm://projects/p/secrets/s"]}' }), /^ {2}- SVC_SECRET_GRANTS\["ten_a"\] grants gcp-sm:\/\/ references this service cannot resolve \(this build has no gcp-sm:\/\/ provider\)$/],
  ['SVC_SECRET_GRANTS with aws-sm:// and no region', () => ({ SVC_SECRET_GRANTS: '{"ten_a":["aws-sm://prod/hook"]}' }), /^ {2}- SVC_SECRET_GRANTS\["ten_a"\] grants aws-sm:\/\/ references this service cannot resolve \(aws-sm:\/\/ needs SVC_AWS_SM_REGION\)$/],
  ['SVC_SECRET_GRANTS "*" reaching into a namespace', () => ({ SVC_SECRET_GRANTS: '{"*":["secret://tenants/ten_a/hook"]}' }), /^ {2}- SVC_SECRET_GRANTS\["\*"\] grants 1 reference\(s\) in another tenant's namespace/],
  ['SVC_BILLING_PROVIDER=stripe without its references', () => ({ SVC_BILLING_PROVIDER: 'stripe', SVC_STRIPE_PRICE_ID: 'price_abc' }), /^ {2}- SVC_BILLING_PROVIDER=stripe needs SVC_STRIPE_SECRET_KEY_REF$/],
  ['SVC_BILLING_PROVIDER=stripe without a price', () => ({ SVC_BILLING_PROVIDER: 'stripe', SVC_STRIPE_SECRET_KEY_REF: 'env://PATH' }), /^ {2}- SVC_BILLING_PROVIDER=stripe needs SVC_STRIPE_PRICE_ID$/],
  ['SVC_STRIPE_SECRET_KEY_REF that does not resolve', () => ({ SVC_BILLING_PROVIDER: 'stripe', SVC_STRIPE_SECRET_KEY_REF: 'env://SVC_TEST_NO_SUCH_STRIPE_KEY', SVC_STRIPE_PRICE_ID: 'price_abc' }), /^ {2}- SVC_STRIPE_SECRET_KEY_REF env:\/\/SVC_TEST_NO_SUCH_STRIPE_KEY does not resolve \(env: not_found\)$/],
  ['SVC_STRIPE_SECRET_KEY_REF given the key itself', () => ({ SVC_BILLING_PROVIDER: 'stripe', SVC_STRIPE_SECRET_KEY_REF: RAW_SECRET, SVC_STRIPE_PRICE_ID: 'price_abc' }), /^ {2}- SVC_STRIPE_SECRET_KEY_REF must be a secret reference \(.*\), never the secret itself$/],
  ['SVC_BILLING_LOCAL_SECRET_REF that does not resolve', () => ({ SVC_BILLING_LOCAL_SECRET_REF: 'env://NOPE' }), /^ {2}- SVC_BILLING_LOCAL_SECRET_REF env:\/\/NOPE does not resolve \(env: not_found\)$/],
  ['SVC_BILLING_LOCAL_SECRET_REF in a map without it', () => ({ SVC_BILLING_LOCAL_SECRET_REF: 'secret://ops/checkout', SVC_SECRET_REF_MAP_FILE: file('refs.json', '{"secret://ops/other":"v"}') }), /^ {2}- SVC_BILLING_LOCAL_SECRET_REF secret:\/\/ops\/checkout does not resolve \(secret: not_found\)$/],
  ['SVC_CONSOLE_DIR missing', () => ({ SVC_CONSOLE_DIR: '/nope' }), /^ {2}- SVC_CONSOLE_DIR is not a folder: \/nope$/],
  ['SVC_CONSOLE_DIR without index.html', () => ({ SVC_CONSOLE_DIR: tempDataDir() }), /^ {2}- SVC_CONSOLE_DIR has no readable index\.html/],
  ['SVC_PKCS11_MODULE missing', () => ({ SVC_SIGNER: 'pkcs11', SVC_PKCS11_MODULE: '/nonexistent/libsofthsm2.so', SVC_PKCS11_TOKEN_LABEL: 'svc', SVC_PKCS11_PIN_REF: 'env://PATH' }), /^ {2}- SVC_PKCS11_MODULE is not a readable file: \/nonexistent\/libsofthsm2\.so$/],
  ['SVC_PKCS11_PIN_REF that does not resolve', () => ({ SVC_SIGNER: 'pkcs11', SVC_PKCS11_MODULE: file('module.so', ''), SVC_PKCS11_TOKEN_LABEL: 'svc', SVC_PKCS11_PIN_REF: 'env://SVC_TEST_NO_SUCH_PIN' }), /^ {2}- SVC_PKCS11_PIN_REF env:\/\/SVC_TEST_NO_SUCH_PIN does not resolve \(env: not_found\)$/],
  ['SVC_VAULT_ADDR without a token reference', () => ({ SVC_VAULT_ADDR: 'http://127.0.0.1:8200' }), /^ {2}- SVC_VAULT_ADDR needs SVC_VAULT_TOKEN_REF/],
  ['SVC_VAULT_TOKEN_REF without an address', () => ({ SVC_VAULT_TOKEN_REF: 'env://PATH' }), /^ {2}- SVC_VAULT_TOKEN_REF and SVC_VAULT_NAMESPACE need SVC_VAULT_ADDR$/],
  ['SVC_VAULT_TOKEN_REF that does not resolve', () => ({ SVC_VAULT_ADDR: 'http://127.0.0.1:8200', SVC_VAULT_TOKEN_REF: 'env://SVC_TEST_NO_SUCH_TOKEN' }), /^ {2}- SVC_VAULT_TOKEN_REF env:\/\/SVC_TEST_NO_SUCH_TOKEN does not resolve \(env: not_found\)$/],
  ['SVC_VAULT_TOKEN_REF inside Vault', () => ({ SVC_VAULT_ADDR: 'http://127.0.0.1:8200', SVC_VAULT_TOKEN_REF: 'vault://secret/token#t' }), /^ {2}- SVC_VAULT_TOKEN_REF cannot be a vault:\/\/ reference/],
  ['SVC_AWS_SM_ENDPOINT without a region', () => ({ SVC_AWS_SM_ENDPOINT: 'http://127.0.0.1:4566' }), /^ {2}- SVC_AWS_SM_ENDPOINT needs SVC_AWS_SM_REGION/],
  ['SVC_DATA_DIR that is a file', () => ({ SVC_DATA_DIR: file('not-a-folder', '') }), /^ {2}- SVC_DATA_DIR is not a folder: /],
];

describe('a setting naming something unusable stops the real process: exit 2, one line', () => {
  for (const [name, env, line] of CASES) {
    it(name, async () => {
      const stderr = await refused(env(), line);
      expect(stderr).not.toContain(RAW_SECRET);
    });
  }

  it('the same settings, usable, start the service', async () => {
    const consoleDir = tempDataDir();
    fs.writeFileSync(path.join(consoleDir, 'index.html'), '<!doctype html><title>console</title>');
    const p = launch(tempDataDir(), {
      SVC_SECRET_REF_MAP_FILE: file('refs.json', '{"secret://ops/checkout":"operator-checkout-secret"}'),
      SVC_SECRET_GRANTS_FILE: file('grants.json', '{"*":["secret://team/hook"]}'),
      SVC_BILLING_LOCAL_SECRET_REF: 'secret://ops/checkout',
      SVC_CONSOLE_DIR: consoleDir,
    });
    await Promise.race([p.waitFor(/listening on/, p.stdout), p.exited.then((e) => Promise.reject(new Error(`exited ${JSON.stringify(e)}: ${p.stderr()}`)))]);
    expect(p.stdout() + p.stderr()).not.toContain('operator-checkout-secret');
  });
});
