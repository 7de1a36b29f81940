/**
 * The seal bundle must verify with stock tools and no code of ours (DESIGN.md §3):
 * sha256sum for payload.json and openssl pkeyutl -rawin for the Ed25519 signature.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLE_FILE_NAMES, buildBundle, verifyBundle } from '../../shared/bundle.ts';
import type { SealBundle } from '../../shared/bundle.ts';
import { fromUtf8 } from '../../shared/encoding.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { failedChecks } from '../../shared/verify.ts';
import { jwksFor, makeSealedPacket, testKey } from '../helpers/seal-fixtures.ts';

const key = testKey();
const keys = trustedKeySet(jwksFor([{ key, status: 'active' }]));
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function freshBundle(): SealBundle {
  const { request, fields } = makeSealedPacket(key);
  return buildBundle(fields, request.seal, key.publicKey);
}

function writeBundle(bundle: SealBundle): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bundle-'));
  dirs.push(dir);
  for (const name of BUNDLE_FILE_NAMES) writeFileSync(path.join(dir, name), bundle[name]);
  // The auditor takes key.pem from the published keys; the recipe carries the same PEM.
  const recipe = JSON.parse(fromUtf8(bundle['verify.json']));
  writeFileSync(path.join(dir, 'key.pem'), recipe.public_key.pem);
  return dir;
}

function opensslVerifies(dir: string): boolean {
  const r = spawnSync('openssl', ['pkeyutl', '-verify', '-pubin', '-inkey', 'key.pem', '-rawin', '-in', 'attestation.json', '-sigfile', 'attestation.sig'], { cwd: dir });
  return r.status === 0;
}

function sha256sumOf(dir: string, file: string): string {
  return execFileSync('sha256sum', [file], { cwd: dir, encoding: 'utf8' }).split(/\s+/)[0]!;
}

function packetHashInAttestation(dir: string): string | undefined {
  try {
    return JSON.parse(readFileSync(path.join(dir, 'attestation.json'), 'utf8')).packet_hash;
  } catch {
    return undefined;
  }
}

function stockToolsVerify(dir: string): boolean {
  return opensslVerifies(dir) && sha256sumOf(dir, 'payload.json') === packetHashInAttestation(dir);
}

function flip(bytes: Uint8Array, at: number): Uint8Array {
  const copy = bytes.slice();
  // Flip to another printable character so JSON often stays parseable and deeper checks run.
  copy[at] = copy[at]! === 0x30 ? 0x31 : copy[at]! ^ 0x01;
  return copy;
}

describe('seal bundle', () => {
  it('verifies with sha256sum + openssl and with our verifier', async () => {
    const bundle = freshBundle();
    const dir = writeBundle(bundle);
    expect(opensslVerifies(dir)).toBe(true);
    expect(sha256sumOf(dir, 'payload.json')).toBe(packetHashInAttestation(dir));
    const recipe = JSON.parse(fromUtf8(bundle['verify.json']));
    expect(sha256sumOf(dir, 'attestation.json')).toBe(recipe.files['attestation.json'].sha256);
    const r = await verifyBundle(bundle, keys);
    expect(failedChecks(r)).toEqual([]);
    expect(r.verified).toBe(true);
  });

  it('keeps secrets out: the recipe holds only public key material', () => {
    const text = fromUtf8(freshBundle()['verify.json']);
    expect(text).not.toContain('PRIVATE');
    expect(text).not.toMatch(/"d":/);
  });

  // One flipped byte in any file fails both the stock tools and our verifier.
  const targeted: [string, (b: SealBundle) => number, string][] = [
    // Inside payload_hash's hex: JSON stays valid, the packet hash no longer matches.
    ['payload.json', (b) => fromUtf8(b['payload.json']).indexOf('"payload_hash":"') + 17, 'packet_hash'],
    // Inside recorded_at's digits: the signed bytes change.
    ['attestation.json', (b) => fromUtf8(b['attestation.json']).indexOf('"recorded_at":"') + 16, 'signature'],
    ['attestation.sig', () => 10, 'signature'],
    // Inside the PEM body: the key no longer matches the trusted key.
    ['verify.json', (b) => fromUtf8(b['verify.json']).indexOf('MCowBQYDK2VwAyEA') + 20, 'canonical_form'],
  ];
  for (const [file, position, check] of targeted) {
    it(`a flipped byte in ${file} fails stock tools and our ${check} check`, async () => {
      const bundle = freshBundle();
      const tampered = { ...bundle, [file]: flip(bundle[file as keyof SealBundle], position(bundle)) };
      const dir = writeBundle(tampered);
      expect(stockToolsVerify(dir)).toBe(false);
      const r = await verifyBundle(tampered, keys);
      expect(r.verified).toBe(false);
      expect(failedChecks(r)).toContain(check);
    });
  }

  it('any single flipped byte in any of the four files fails our verifier', async () => {
    const bundle = freshBundle();
    for (const file of BUNDLE_FILE_NAMES) {
      const size = bundle[file].length;
      for (const at of [0, 1, Math.floor(size / 3), Math.floor(size / 2), size - 2, size - 1]) {
        const r = await verifyBundle({ ...bundle, [file]: flip(bundle[file], at) }, keys);
        expect(r.verified, `${file}@${at}`).toBe(false);
      }
    }
  });

  it('reports missing files and non-canonical JSON under canonical_form', async () => {
    const bundle = freshBundle();
    const { 'attestation.sig': _sig, ...missing } = bundle;
    const r1 = await verifyBundle(missing, keys);
    expect(r1.checks[0]!.detail).toContain('attestation.sig');
    const pretty = new TextEncoder().encode(JSON.stringify(JSON.parse(fromUtf8(bundle['payload.json'])), null, 2));
    const r2 = await verifyBundle({ ...bundle, 'payload.json': pretty }, keys);
    expect(failedChecks(r2)).toContain('canonical_form');
  });

  it('fails key identity when the signing key is not trusted', async () => {
    const r = await verifyBundle(freshBundle(), trustedKeySet(jwksFor([])));
    expect(failedChecks(r)).toEqual(expect.arrayContaining(['signature', 'key_identity', 'key_status']));
  });
});
