/**
 * The unpacking the end-to-end tests rely on (harness/unzip.ts), on the real Chrome package and
 * on copies of it damaged the two ways that matter: an entry whose bytes changed is refused
 * (CRC-32, APPNOTE.TXT §4.4.7), and an entry named to land outside the folder is refused before
 * anything is written there.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { extensionPackages } from './harness/packages.ts';
import { unzip } from './harness/unzip.ts';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ag-unzip-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

const zip = () => fs.readFileSync(extensionPackages().chrome.zip);

/** Offset of the central directory entry named `name` (signature 0x02014b50, §4.3.12). */
function centralEntry(bytes: Buffer, name: string): number {
  for (let i = bytes.length - 46; i >= 0; i--) {
    if (bytes.readUInt32LE(i) !== 0x02014b50) continue;
    const len = bytes.readUInt16LE(i + 28);
    if (bytes.toString('utf8', i + 46, i + 46 + len) === name) return i;
  }
  throw new Error(`no central directory entry ${name}`);
}

it('unpacks the package as wxt zip wrote it: the same files the global setup found', () => {
  const dir = path.join(work, 'ok');
  expect(unzip(extensionPackages().chrome.zip, dir).sort()).toEqual(extensionPackages().chrome.files);
  expect(JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')).manifest_version).toBe(3);
});

it('refuses an entry whose bytes were changed (CRC-32 mismatch)', () => {
  const bytes = zip();
  const at = centralEntry(bytes, 'manifest.json');
  // One bit of the recorded CRC-32 flipped: the bytes no longer match it.
  bytes.writeUInt32LE((bytes.readUInt32LE(at + 16) ^ 0x1) >>> 0, at + 16);
  const file = path.join(work, 'crc.zip');
  fs.writeFileSync(file, bytes);
  expect(() => unzip(file, path.join(work, 'crc'))).toThrow(/manifest\.json is damaged/);
});

it('refuses an entry named to land outside the folder, writing nothing there', () => {
  const bytes = zip();
  const at = centralEntry(bytes, 'manifest.json');
  // Same length as "manifest.json", so every offset after it stays right.
  const escape = '../escaped.js';
  expect(escape.length).toBe('manifest.json'.length);
  bytes.write(escape, at + 46, 'utf8');
  const file = path.join(work, 'escape.zip');
  fs.writeFileSync(file, bytes);
  expect(() => unzip(file, path.join(work, 'inner', 'escape'))).toThrow(/points outside the folder/);
  expect(fs.existsSync(path.join(work, 'inner', 'escaped.js'))).toBe(false);
});
