/**
 * Seal-bundle packages (interface-spec "Batch seal request"; DESIGN.md §3): per record a
 * folder holding its 4-file bundle, and MANIFEST.json at the root with every file's SHA-256,
 * plus SHA256SUMS so `sha256sum -c SHA256SUMS` checks the package with no code of ours.
 * Once a record's epoch has closed its folder also holds inclusion-proof.json, the record's
 * inclusion proof with the epoch's RFC 3161 tokens and witness cosignatures, so the package
 * meets a verifier's timestamp and witness policy as served (svc-verify <folder> --tsa-roots …
 * --witness-key …). Re-derived from stored receipt metadata; nothing is stored or metered.
 */
import { BUNDLE_FILE_NAMES, BUNDLE_PROOF_FILE } from '../../shared/bundle.ts';
import type { SealBundle } from '../../shared/bundle.ts';
import { canonicalBytes } from '../../shared/canonical-json.ts';
import { toBase64 } from '../../shared/encoding.ts';
import { sha256Hex } from '../../shared/hash.ts';
import type { ArchiveEntry } from './archive.ts';
import { tarArchive, zipArchive } from './archive.ts';

export const PACKAGE_FORMAT = 'svc.seal-bundle-package/v1';
export const MANIFEST_FILE = 'MANIFEST.json';
export const SUMS_FILE = 'SHA256SUMS';

export interface PackageRecord {
  actionKey: string;
  bundle: SealBundle;
  /** The record's inclusion proof as GET …/inclusion-proof serves it, once its epoch has closed. */
  inclusionProof?: Uint8Array;
}

/** A folder per record from its action key: <vertical>/<action-type>/<id>, path-safe. */
export function bundlePath(actionKey: string): string {
  return actionKey
    .split(':')
    .map((s) => s.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_'))
    .join('/');
}

export interface BundlePackage {
  entries: ArchiveEntry[];
  /** The JSON form: per record its path and files (base64), and the manifest. */
  json: Record<string, unknown>;
}

export function bundlePackage(records: readonly PackageRecord[]): BundlePackage {
  const entries: ArchiveEntry[] = [];
  const listed = records.map((r) => {
    const path = bundlePath(r.actionKey);
    const file = (name: string, data: Uint8Array) => {
      entries.push({ path: `${path}/${name}`, data });
      return { name, path: `${path}/${name}`, sha256: sha256Hex(data), content_base64: toBase64(data) };
    };
    const files = BUNDLE_FILE_NAMES.map((name) => file(name, r.bundle[name]));
    // Beside the 4 files, not among them: clients that take `files` as the bundle keep working.
    const proof = r.inclusionProof && file(BUNDLE_PROOF_FILE, r.inclusionProof);
    return { action_key: r.actionKey, path, files, ...(proof ? { inclusion_proof: proof } : {}) };
  });
  const anchored = listed.some((r) => r.inclusion_proof);
  const manifest = {
    format: PACKAGE_FORMAT,
    records: listed.map((r) => ({ action_key: r.action_key, path: r.path, ...(r.inclusion_proof ? { inclusion_proof: r.inclusion_proof.path } : {}) })),
    files: entries.map((e) => ({ path: e.path, sha256: sha256Hex(e.data) })),
    verify: [
      `sha256sum -c ${SUMS_FILE}`,
      'in each record folder: sha256sum payload.json (equals packet_hash in attestation.json), then',
      'openssl pkeyutl -verify -pubin -inkey key.pem -rawin -in attestation.json -sigfile attestation.sig',
      // Listed only when a record carries one, so a package without proofs keeps its bytes.
      ...(anchored
        ? [
            `a record folder with ${BUNDLE_PROOF_FILE} (its epoch has closed): svc-verify <folder> --keys service-keys.json ` +
              '[--tsa-roots <TSA roots pem>] [--witness-key <witness vkey>] checks its inclusion, the epoch\'s RFC 3161 timestamps and witness cosignatures',
          ]
        : []),
    ],
  };
  const manifestBytes = canonicalBytes(manifest);
  const sums = new TextEncoder().encode(entries.map((e) => `${sha256Hex(e.data)}  ${e.path}\n`).join(''));
  entries.push({ path: MANIFEST_FILE, data: manifestBytes }, { path: SUMS_FILE, data: sums });
  return {
    entries,
    json: { format: PACKAGE_FORMAT, records: listed, manifest_path: MANIFEST_FILE, manifest, sha256sums: new TextDecoder().decode(sums) },
  };
}

export type ArchiveKind = 'tar' | 'zip';

/** The archive an Accept header asks for (RFC 9110 §12.5.1), or undefined for JSON. */
export function archiveKindFor(accept: string | undefined): ArchiveKind | undefined {
  const types = (accept ?? '')
    .split(',')
    .map((t) => t.split(';')[0]!.trim().toLowerCase())
    .filter(Boolean);
  for (const t of types) {
    if (t === 'application/json' || t === 'application/*' || t === '*/*') return undefined;
    if (t === 'application/x-tar' || t === 'application/tar') return 'tar';
    if (t === 'application/zip') return 'zip';
  }
  return undefined;
}

/** Fixed archive time: the package's bytes depend only on its records. */
const ARCHIVE_MTIME = new Date('2025-01-01T00:00:00Z');

export function archiveResponse(kind: ArchiveKind, entries: readonly ArchiveEntry[], name: string): Response {
  const body = kind === 'tar' ? tarArchive(entries, ARCHIVE_MTIME.getTime() / 1000) : zipArchive(entries, ARCHIVE_MTIME);
  return new Response(body as Uint8Array<ArrayBuffer>, {
    status: 200,
    headers: {
      'content-type': kind === 'tar' ? 'application/x-tar' : 'application/zip',
      'content-disposition': `attachment; filename="${name}.${kind}"`,
      vary: 'accept',
    },
  });
}
