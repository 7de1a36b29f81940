/**
 * MANIFEST.json of a backup folder: what the folder must hold (each file's size and SHA-256),
 * which schema and release wrote it, and the newest signed epoch checkpoint it contains, so
 * an admin can later prove with an RFC 9162 consistency proof (GET /epochs/consistency) that
 * the live service only ever extended what was backed up.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SignedEpochHeader } from '../../shared/epoch.ts';

export const BACKUP_FORMAT = 'svc.backup/v1';
export const MANIFEST_FILE = 'MANIFEST.json';
/** The public JWKS of the store's keys, beside the database. */
export const PUBLIC_KEYS_FILE = 'service-keys.json';

export interface ManifestFile {
  /** Relative to the backup folder, with / separators. */
  path: string;
  bytes: number;
  sha256: string;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  created_at: string;
  service_version: string;
  /** The highest migration applied to the copied database (schema_migrations). */
  schema_version: number;
  /** Whether keys/ holds the production private key (`--include-keys`). */
  private_key_included: boolean;
  files: ManifestFile[];
  counts: { tenants: number; records: number; epochs: number };
  /** The newest epoch in the copy, or null before the first closes. */
  last_epoch: {
    epoch_seq: number;
    canonical_root: string;
    epoch_digest: string;
    /** The epoch log's head: the checkpoint a consistency proof starts from. */
    epoch_log: { size: number; root: string };
    signed_header: SignedEpochHeader;
  } | null;
}

export function fileEntry(dir: string, relative: string): ManifestFile {
  const data = fs.readFileSync(path.join(dir, relative));
  return { path: relative, bytes: data.length, sha256: createHash('sha256').update(data).digest('hex') };
}

export class ManifestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestError';
  }
}

/** Reads MANIFEST.json, refusing anything but this format with well-formed file entries. */
export function readManifest(dir: string): BackupManifest {
  const file = path.join(dir, MANIFEST_FILE);
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as BackupManifest;
  } catch (err) {
    throw new ManifestError(`${MANIFEST_FILE} could not be read as JSON (${(err as NodeJS.ErrnoException).code ?? 'invalid JSON'})`);
  }
  if (manifest?.format !== BACKUP_FORMAT) throw new ManifestError(`${MANIFEST_FILE}: expected format ${BACKUP_FORMAT}`);
  const wellFormed = Array.isArray(manifest.files) && manifest.files.every(
    (f) => typeof f?.path === 'string' && isInside(f.path) && Number.isSafeInteger(f.bytes) && /^[0-9a-f]{64}$/.test(String(f.sha256)),
  );
  if (!wellFormed || !Number.isSafeInteger(manifest.schema_version)) throw new ManifestError(`${MANIFEST_FILE}: malformed files or schema_version`);
  return manifest;
}

/** A relative path that stays inside the folder (no absolute path, no `..`). */
function isInside(relative: string): boolean {
  return relative !== '' && !path.isAbsolute(relative) && !relative.split(/[\\/]/).some((part) => part === '..' || part === '');
}

/** Every file the manifest lists, with its size and SHA-256 as listed; problems, or none. */
export function checkManifestFiles(dir: string, manifest: BackupManifest): string[] {
  const problems: string[] = [];
  for (const f of manifest.files) {
    let actual: ManifestFile;
    try {
      actual = fileEntry(dir, f.path);
    } catch {
      problems.push(`${f.path} is missing`);
      continue;
    }
    if (actual.bytes !== f.bytes) problems.push(`${f.path} has ${actual.bytes} bytes, the manifest says ${f.bytes}`);
    else if (actual.sha256 !== f.sha256) problems.push(`${f.path} has SHA-256 ${actual.sha256}, the manifest says ${f.sha256}`);
  }
  return problems;
}
