/**
 * Offline verifier: `npm run verify -- <bundle-dir | packet.json> [--keys <jwks file or URL>] [--json]`
 *
 * Needs no companion: all checks are shared/ code. Trusts only the keys it is given; with no
 * --keys it trusts just the sandbox dev key, which anyone can re-derive (DESIGN.md §3), so
 * production evidence fails key identity until the tenant's published JWKS is supplied.
 * Exit codes: 0 every check passed, 1 a check failed, 2 usage error.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { BUNDLE_FILE_NAMES, verifyBundle } from '../../shared/bundle.ts';
import { parseJson } from '../../shared/canonical-json.ts';
import { isRecord } from '../../shared/attestation.ts';
import { sandboxOnlyKeySet, trustedKeySet } from '../../shared/trusted-keys.ts';
import type { TrustedKeySet } from '../../shared/trusted-keys.ts';
import { verifyEvidence } from '../../shared/verify.ts';
import type { VerifyResult } from '../../shared/types.ts';
import { formatExportSummary, isRecordsExport, verifyRecordsExport } from './verify-export.ts';

const USAGE = `usage: svc-verify <bundle-dir | packet.json> [--keys <jwks file or URL>] [--json]

  <bundle-dir>   a seal bundle (payload.json, attestation.json, attestation.sig, verify.json),
                 or a batch package whose sub-folders are bundles
  <packet.json>  a verify request, a gate/record response, or an exported record
  <export.ndjson> a records export (npm run export), verified record by record
  --keys         the tenant's published keys (/.well-known/service-keys.json), file or URL;
                 without it only the sandbox dev key is trusted
  --json         print the result as JSON

exit status: 0 verified, 1 a check failed, 2 usage error`;

export class UsageError extends Error {}

interface Options {
  target: string;
  keys: string | undefined;
  json: boolean;
}

export function parseArgs(argv: string[]): Options {
  let target: string | undefined;
  let keys: string | undefined;
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--json') json = true;
    else if (arg === '--keys') {
      keys = argv[++i];
      if (!keys) throw new UsageError('--keys needs a file or URL');
    } else if (arg.startsWith('--keys=')) keys = arg.slice('--keys='.length);
    else if (arg === '-h' || arg === '--help') throw new UsageError('');
    else if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}`);
    else if (target === undefined) target = arg;
    else throw new UsageError(`unexpected argument ${arg}`);
  }
  if (target === undefined) throw new UsageError('missing <bundle-dir | packet.json>');
  return { target, keys, json };
}

export async function loadKeys(source: string | undefined): Promise<TrustedKeySet> {
  if (source === undefined) return sandboxOnlyKeySet();
  let text: string;
  if (/^https?:\/\//i.test(source)) {
    const res = await fetch(source, { redirect: 'error', signal: AbortSignal.timeout(10_000) });
    if (!res.ok) throw new UsageError(`keys: ${source} answered ${res.status}`);
    text = await res.text();
  } else {
    if (!existsSync(source)) throw new UsageError(`keys: no such file ${source}`);
    text = readFileSync(source, 'utf8');
  }
  try {
    return trustedKeySet(parseJson(text));
  } catch (e) {
    throw new UsageError(`keys: not a valid JWKS: ${(e as Error).message}`);
  }
}

interface Report {
  source: string;
  action_key: string | null;
  result: VerifyResult;
}

function readBundleDir(dir: string): Record<string, Uint8Array> {
  const files: Record<string, Uint8Array> = {};
  for (const name of BUNDLE_FILE_NAMES) {
    const p = path.join(dir, name);
    if (existsSync(p)) files[name] = new Uint8Array(readFileSync(p));
  }
  return files;
}

/** Accepts a verify request as-is, or finds one inside a gate/record response or export item. */
export function toVerifyRequest(value: unknown): unknown {
  if (!isRecord(value)) return value;
  if (isRecord(value.verify_request)) return value.verify_request;
  if (isRecord(value.evidence_packet)) {
    return { ...value.evidence_packet, decision: value.decision ?? null, payload_hash: value.payload_hash, review_route: value.review_route ?? null };
  }
  return value;
}

export async function verifyTarget(target: string, keys: TrustedKeySet): Promise<Report[]> {
  if (!existsSync(target)) throw new UsageError(`no such file or folder ${target}`);
  if (statSync(target).isDirectory()) {
    if (existsSync(path.join(target, 'attestation.json')) || existsSync(path.join(target, 'payload.json'))) {
      return [await bundleReport(target, keys)];
    }
    // A batch package: every sub-folder holding a bundle verifies independently.
    const subdirs = readdirSync(target, { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(path.join(target, d.name, 'attestation.json')))
      .map((d) => path.join(target, d.name))
      .sort();
    if (subdirs.length === 0) throw new UsageError(`${target} holds no seal bundle`);
    const reports: Report[] = [];
    for (const dir of subdirs) reports.push(await bundleReport(dir, keys));
    return reports;
  }
  let parsed: unknown;
  try {
    parsed = parseJson(readFileSync(target, 'utf8'));
  } catch (e) {
    throw new UsageError(`${target}: not JSON: ${(e as Error).message}`);
  }
  const request = toVerifyRequest(parsed);
  const result = await verifyEvidence(request, keys);
  const actionKey = isRecord(request) && typeof request.action_key === 'string' ? request.action_key : null;
  return [{ source: target, action_key: actionKey, result }];
}

async function bundleReport(dir: string, keys: TrustedKeySet): Promise<Report> {
  const files = readBundleDir(dir);
  const result = await verifyBundle(files, keys);
  let actionKey: string | null = null;
  try {
    const att = JSON.parse(new TextDecoder().decode(files['attestation.json'])) as { action_key?: unknown };
    if (typeof att.action_key === 'string') actionKey = att.action_key;
  } catch {
    // Reported by the canonical_form check already.
  }
  return { source: dir, action_key: actionKey, result };
}

export function formatReport(r: Report): string {
  const lines = [`Evidence ${r.action_key ?? '(unknown action)'}  [${r.source}]`];
  const width = Math.max(...r.result.checks.map((c) => c.name.length));
  for (const c of r.result.checks) lines.push(`  ${c.ok ? 'PASS' : 'FAIL'}  ${c.name.padEnd(width)}  ${c.detail}`);
  const failed = r.result.checks.filter((c) => !c.ok).length;
  if (!r.result.verified) lines.push(`  RESULT: NOT VERIFIED (${failed} check${failed === 1 ? '' : 's'} failed)`);
  else if (r.result.key_status === 'sandbox') lines.push('  RESULT: VERIFIED as SANDBOX evidence (dev key): never production evidence');
  else lines.push(`  RESULT: VERIFIED (production key, ${r.result.key_status})`);
  return lines.join('\n');
}

export async function main(argv: string[], out: (s: string) => void = console.log, err: (s: string) => void = console.error): Promise<number> {
  try {
    const opts = parseArgs(argv);
    const keys = await loadKeys(opts.keys);
    if (isRecordsExport(opts.target)) {
      if (!existsSync(opts.target)) throw new UsageError(`no such file ${opts.target}`);
      const summary = await verifyRecordsExport(opts.target, keys);
      out(opts.json ? JSON.stringify(summary, null, 2) : formatExportSummary(summary));
      return summary.records > 0 && summary.failed === 0 ? 0 : 1;
    }
    const reports = await verifyTarget(opts.target, keys);
    if (opts.json) {
      const body = reports.map((r) => ({ source: r.source, action_key: r.action_key, ...r.result }));
      out(JSON.stringify(body.length === 1 ? body[0] : body, null, 2));
    } else {
      out(reports.map(formatReport).join('\n\n'));
    }
    return reports.every((r) => r.result.verified) ? 0 : 1;
  } catch (e) {
    if (e instanceof UsageError) {
      err(e.message ? `svc-verify: ${e.message}\n\n${USAGE}` : USAGE);
      return 2;
    }
    throw e;
  }
}

// Run when executed directly (npm run verify / the svc-verify bin), not when imported by tests.
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  main(process.argv.slice(2)).then((code) => process.exit(code), (e) => {
    console.error(`svc-verify: ${(e as Error).stack ?? e}`);
    process.exit(2);
  });
}
