/**
 * The offline verifier's anchoring half (DESIGN.md §4) and its bundle fetcher:
 *
 *   svc-verify <proof.json> --keys service-keys.json
 *     an inclusion proof (GET /v1/records/{action_key}/inclusion-proof), a signed epoch
 *     header (GET /epochs/{seq}) or a consistency proof (GET /epochs/consistency,
 *     GET /tenant/log/consistency), recognised by shape; all checks are shared/ code.
 *
 *   svc-verify bundle <action_key> --out <dir> [--url <base>]
 *     fetches the record's 4-file seal bundle (POST /evidence-packets/seal-bundle/batch) from
 *     the companion at --url, else SVC_URL (./service-url.ts), with the API key from SVC_API_KEY (never a command-line argument: those show in `ps`), writes
 *     it and the service's key set to <dir> with key.pem, verifies it, and prints the
 *     stock-tool commands that check it with no code of ours.
 */
import { lstatSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { failedAnchorChecks, verifyConsistencyProof, verifyEpochHeader, verifyInclusionProof } from '../../shared/anchor-verify.ts';
import type { AnchorResult } from '../../shared/anchor-verify.ts';
import { BUNDLE_FILE_NAMES, verifyBundle } from '../../shared/bundle.ts';
import { isRecord } from '../../shared/attestation.ts';
import { publicKeyToSpkiPem } from '../../shared/keys.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import type { TrustedKeySet } from '../../shared/trusted-keys.ts';
import { failedChecks } from '../../shared/verify.ts';
import type { Subcommand } from './verify.ts';
import { refusalMessage } from './problem-answer.ts';
import { DEFAULT_SERVICE_URL, SERVICE_URL_ENV, ServiceUrlError, UnreachableError, fetchService, serviceUrl } from './service-url.ts';
import { DEFAULT_MAX_BYTES, MAX_BYTES_ENV, ReadRefused, maxBytesSetting, readBodyCapped, readCapped } from './verify-read.ts';
import { BUNDLE_PROOF_FILE, TimestampPolicyError } from './verify-timestamps.ts';

export const PROOFS_USAGE = `       svc-verify <inclusion-proof.json | epoch.json | consistency.json> --keys <jwks file or URL>
       svc-verify bundle <action_key> --out <dir> [--url <base url>]   (API key from SVC_API_KEY)`;

export interface ProofReport {
  source: string;
  kind: 'inclusion proof' | 'epoch header' | 'consistency proof';
  result: AnchorResult;
  /** The document verified (for policies applied on top, ./verify-witness.ts). */
  value?: Record<string, unknown>;
}

type Kind = ProofReport['kind'];

function kindOf(v: Record<string, unknown>): Kind | undefined {
  if (isRecord(v.tenant_log) && isRecord(v.epoch) && isRecord(v.epoch_header)) return 'inclusion proof';
  if (isRecord(v.header) && typeof v.checkpoint === 'string') return 'epoch header';
  if (isRecord(v.from) && isRecord(v.to) && Array.isArray(v.proof)) return 'consistency proof';
  return undefined;
}

/** Verifies `target` when it is a JSON anchoring document; undefined for anything else. */
export async function verifyProofFile(target: string, keys: TrustedKeySet, maxBytes = DEFAULT_MAX_BYTES): Promise<ProofReport | undefined> {
  if (!target.endsWith('.json') || !lstatSync(target, { throwIfNoEntry: false })) return undefined;
  // A link, a non-regular file or one past the cap is refused here (ReadRefused), not guessed at.
  const bytes = readCapped(target, maxBytes);
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isRecord(value)) return undefined;
  const kind = kindOf(value);
  if (!kind) return undefined;
  const result =
    kind === 'inclusion proof' ? await verifyInclusionProof(value, keys) : kind === 'epoch header' ? await verifyEpochHeader(value, keys) : verifyConsistencyProof(value);
  return { source: target, kind, result, value };
}

export function formatProofReport(r: ProofReport): string {
  const width = Math.max(...r.result.checks.map((c) => c.name.length));
  const failed = failedAnchorChecks(r.result);
  return [
    `${r.kind[0]!.toUpperCase()}${r.kind.slice(1)}  [${r.source}]`,
    ...r.result.checks.map((c) => `  ${c.ok ? 'PASS' : 'FAIL'}  ${c.name.padEnd(width)}  ${c.detail}`),
    r.result.verified ? '  RESULT: VERIFIED' : `  RESULT: NOT VERIFIED (${failed.join(', ')})`,
  ].join('\n');
}

class BundleCommandError extends Error {}

/** `svc-verify bundle`: fetch, write, verify; exit 0 verified, 1 not verified, 2 usage or fetch error. */
export const BUNDLE_SUBCOMMAND: Subcommand = {
  usage: `usage: svc-verify bundle <action_key> --out <dir> [--url <base url>]

  Fetches the record's seal bundle (POST /evidence-packets/seal-bundle/batch) with the API key
  in SVC_API_KEY, writes its 4 files, the service's key set (service-keys.json) and the signing
  key as key.pem to <dir>, verifies it, and prints the stock-tool commands.
  --url   the companion's base URL (default: ${SERVICE_URL_ENV}, else ${DEFAULT_SERVICE_URL})
  --max-bytes  the most read of each answer (default: ${MAX_BYTES_ENV}, else 64 MiB); an answer
          is streamed to a file in <dir> and cut off past it`,
  options: { out: { type: 'string' }, url: { type: 'string' } },
  run: (values, positionals, io) =>
    bundleCommand(
      {
        actionKey: positionals[0],
        extra: positionals[1],
        out: values.out as string | undefined,
        url: values.url as string | undefined,
        maxBytes: values['max-bytes'] as string | undefined,
      },
      io.out,
      io.err,
    ),
};

interface BundleArgs {
  actionKey: string | undefined;
  extra: string | undefined;
  out: string | undefined;
  url: string | undefined;
  /** --max-bytes as given; SVC_VERIFY_MAX_BYTES or the default when absent. */
  maxBytes?: string | undefined;
}

export async function bundleCommand(args: BundleArgs, out: (s: string) => void, err: (s: string) => void, env = process.env): Promise<number> {
  try {
    if (!args.actionKey) throw new BundleCommandError('missing <action_key>');
    if (args.extra !== undefined) throw new BundleCommandError(`unexpected argument ${args.extra}`);
    if (!args.out) throw new BundleCommandError('missing --out <dir>');
    const cap = maxBytesSetting(args.maxBytes, env);
    if (typeof cap !== 'number') throw new BundleCommandError(cap.problem);
    const o = { actionKey: args.actionKey, out: args.out, url: serviceUrl(args.url, env) };
    const apiKey = env.SVC_API_KEY;
    if (!apiKey) throw new BundleCommandError('set SVC_API_KEY to the tenant API key');
    mkdirSync(o.out, { recursive: true });
    // Each answer is streamed to a file in <dir> with the cap enforced as it arrives, then read
    // back (capped again): a huge or endless answer costs the cap, never more.
    const download = path.join(o.out, '.download.json');
    const get = async (url: string, init: Parameters<typeof fetchService>[1]) => {
      const res = await fetchService(url, init);
      try {
        await readBodyCapped(res, url, cap, download);
        const text = readCapped(download, cap).toString('utf8');
        if (!res.ok) throw new BundleCommandError(refusalMessage(url, res.status, text));
        return JSON.parse(text) as Record<string, any>;
      } finally {
        rmSync(download, { force: true });
      }
    };
    const pkg = await get(`${o.url}/evidence-packets/seal-bundle/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-service-key': apiKey },
      body: JSON.stringify({ action_keys: [o.actionKey] }),
      timeoutMs: 30_000,
    });
    const jwks = await get(`${o.url}/.well-known/service-keys.json`, { timeoutMs: 10_000 });
    const keys = trustedKeySet(jwks);

    const files: Record<string, Uint8Array> = {};
    for (const f of pkg.records[0].files as { name: string; content_base64: string }[]) {
      if (!(BUNDLE_FILE_NAMES as readonly string[]).includes(f.name)) throw new BundleCommandError(`unexpected bundle file ${f.name}`);
      files[f.name] = new Uint8Array(Buffer.from(f.content_base64, 'base64'));
      writeFileSync(path.join(o.out, f.name), files[f.name]!);
    }
    const keyId = JSON.parse(new TextDecoder().decode(files['attestation.json'])).key_id as string;
    const key = keys.get(keyId);
    writeFileSync(path.join(o.out, 'service-keys.json'), `${JSON.stringify(jwks, null, 2)}\n`);
    if (key) writeFileSync(path.join(o.out, 'key.pem'), publicKeyToSpkiPem(key.publicKey));

    // Its inclusion proof, with the epoch's RFC 3161 timestamps and witness cosignatures: the
    // package carries it once the epoch has closed, so the folder holds what the package held.
    const proof = pkg.records[0].inclusion_proof as { name: string; content_base64: string } | undefined;
    if (proof && proof.name !== BUNDLE_PROOF_FILE) throw new BundleCommandError(`unexpected bundle file ${proof.name}`);
    if (proof) writeFileSync(path.join(o.out, BUNDLE_PROOF_FILE), Buffer.from(proof.content_base64, 'base64'));
    const anchored = proof !== undefined;
    const result = await verifyBundle(files, keys);
    const failed = failedChecks(result);
    out(
      [
        `Seal bundle for ${o.actionKey} written to ${o.out} (key.pem from ${o.url}/.well-known/service-keys.json)`,
        anchored ? `  with ${BUNDLE_PROOF_FILE} (its epoch's timestamps: svc-verify ${o.out} --keys service-keys.json --tsa-roots <pem>)` : '  its epoch has not closed yet: no inclusion proof',
        failed.length === 0 ? '  verified by svc-verify' : `  NOT VERIFIED: ${failed.join(', ')}`,
        '  check it with stock tools:',
        `    cd ${o.out}`,
        '    sha256sum payload.json    # equals "packet_hash" in attestation.json',
        '    openssl pkeyutl -verify -pubin -inkey key.pem -rawin -in attestation.json -sigfile attestation.sig',
      ].join('\n'),
    );
    return failed.length === 0 ? 0 : 1;
  } catch (e) {
    if (e instanceof BundleCommandError || e instanceof TimestampPolicyError || e instanceof ServiceUrlError || e instanceof UnreachableError || e instanceof ReadRefused || e instanceof TypeError) {
      err(`svc-verify bundle: ${e.message}`);
      return 2;
    }
    throw e;
  }
}
