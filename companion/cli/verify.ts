/**
 * Offline verifier: `svc-verify <bundle-dir | packet.json> [--keys <jwks file or URL>] [--json]`
 *
 * Needs no companion: all checks are shared/ code. Trusts only the keys it is given; with no
 * --keys it trusts just the sandbox dev key, which anyone can re-derive (DESIGN.md §3), so
 * production evidence fails key identity until the tenant's published JWKS is supplied.
 * Exit codes: 0 every check passed, 1 a check failed, 2 usage or network error, or a file that
 * holds the companion's error answer (problem+json) rather than evidence.
 *
 * Arguments are parsed with util.parseArgs. A subcommand (e.g. one for inclusion proofs) is an
 * entry in SUBCOMMANDS: its own options and run(); --help, --version, --json errors and exit
 * codes are handled here once for all of them.
 */
import { existsSync, lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { BUNDLE_FILE_NAMES, verifyBundle } from '../../shared/bundle.ts';
import { parseJson } from '../../shared/canonical-json.ts';
import { isRecord } from '../../shared/attestation.ts';
import { sandboxOnlyKeySet, trustedKeySet } from '../../shared/trusted-keys.ts';
import type { TrustedKeySet } from '../../shared/trusted-keys.ts';
import { verifyEvidence } from '../../shared/verify.ts';
import type { Check, VerifyResult } from '../../shared/types.ts';
import { SERVICE_VERSION } from '../core/version.ts';
import { BUNDLE_SUBCOMMAND, PROOFS_USAGE, formatProofReport, verifyProofFile } from './verify-proofs.ts';
import { formatExportSummary, isRecordsExport, verifyRecordsExport } from './verify-export.ts';
import { ErrorAnswerFile, errorAnswerMessage, problemOf, refusalMessage } from './problem-answer.ts';
import { UnreachableError, fetchService, unreachableReason } from './service-url.ts';
import { DEFAULT_MAX_BYTES, MAX_BYTES_ENV, ReadRefused, maxBytesSetting, readBodyCapped, readCapped } from './verify-read.ts';
import { WITNESS_OPTIONS, WITNESS_USAGE, WitnessPolicyError, applyBundleWitnessPolicy, applyWitnessPolicy, witnessPolicyOf } from './verify-witness.ts';
import { TIMESTAMP_OPTIONS, TIMESTAMP_USAGE, TimestampPolicyError, applyBundleTimestampPolicy, applyTimestampPolicy, timestampPolicyOf } from './verify-timestamps.ts';
import type { TimestampPolicy } from './verify-timestamps.ts';
import type { WitnessPolicy } from '../../shared/witness.ts';
import { MONITOR_SUBCOMMAND, MONITOR_USAGE } from './monitor.ts';

const USAGE = `usage: svc-verify <bundle-dir | packet.json> [--keys <jwks file or URL>] [--json]
${PROOFS_USAGE}
${MONITOR_USAGE}
       svc-verify --help | --version

  <bundle-dir>   a seal bundle (payload.json, attestation.json, attestation.sig, verify.json),
                 or a batch package whose sub-folders are bundles
  <packet.json>  a verify request, a gate/record response, or an exported record
  <export.ndjson> a records export (npm run export), verified record by record
  --keys         the tenant's published keys (/.well-known/service-keys.json), file or URL;
                 without it only the sandbox dev key is trusted
  --json         print the result (and any error) as JSON
${WITNESS_USAGE}
${TIMESTAMP_USAGE}
  --max-bytes    the most the verifier reads of any one file or download (default: ${MAX_BYTES_ENV},
                 else 64 MiB); symbolic links and anything but regular files are refused
  -h, --help     print this help
  -v, --version  print the version

Each check prints PASS, FAIL, or SKIP when an earlier failure means it could not run.
exit status: 0 verified, 1 a check failed, 2 usage or network error, or the file is an
error answer (problem+json) rather than evidence`;

/** A mistake in the command line: reported with the usage text. */
export class UsageError extends Error {}
/** The keys or target could not be read (unreachable URL, missing file): one line, no usage. */
export class InputError extends Error {}

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

/** One way of using the verifier beyond the default `<target>` form. */
export interface Subcommand {
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(values: Record<string, string | boolean | undefined>, positionals: string[], io: Io & { json: boolean }): Promise<number>;
}

/** Subcommands by name: `svc-verify <name> …`. */
export const SUBCOMMANDS: Record<string, Subcommand> = { bundle: BUNDLE_SUBCOMMAND, monitor: MONITOR_SUBCOMMAND };

const COMMON_OPTIONS = {
  json: { type: 'boolean' },
  'max-bytes': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

interface Options {
  target: string;
  keys: string | undefined;
  json: boolean;
  /** The most read of any one file or download (./verify-read.ts). */
  maxBytes: number;
  /** --witness-key / --min-cosignatures (./verify-witness.ts); undefined: no witness policy. */
  witness?: WitnessPolicy | undefined;
  /** --tsa-roots / --min-timestamps (./verify-timestamps.ts); undefined: no timestamp policy. */
  timestamps?: TimestampPolicy | undefined;
}

/** --max-bytes, else SVC_VERIFY_MAX_BYTES, else the default; a bad value is a usage mistake. */
export function maxBytesOf(flag: unknown, env: NodeJS.ProcessEnv = process.env): number {
  const cap = maxBytesSetting(typeof flag === 'string' ? flag : undefined, env);
  if (typeof cap !== 'number') throw new UsageError(cap.problem);
  return cap;
}

export function parseVerifyArgs(argv: string[]): Options & { help: boolean; version: boolean } {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...COMMON_OPTIONS, keys: { type: 'string' }, ...WITNESS_OPTIONS, ...TIMESTAMP_OPTIONS }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { values, positionals } = parsed;
  const help = values.help === true;
  const version = values.version === true;
  if (!help && !version && positionals.length === 0) throw new UsageError('missing <bundle-dir | packet.json>');
  if (positionals.length > 1) throw new UsageError(`unexpected argument ${positionals[1]}`);
  if (values.keys === '') throw new UsageError('--keys needs a file or URL');
  const maxBytes = maxBytesOf(values['max-bytes']);
  let witness: WitnessPolicy | undefined;
  try {
    witness = witnessPolicyOf(values);
  } catch (e) {
    throw e instanceof WitnessPolicyError ? new UsageError(e.message) : e;
  }
  let timestamps: TimestampPolicy | undefined;
  try {
    timestamps = timestampPolicyOf(values, maxBytes);
  } catch (e) {
    throw e instanceof TimestampPolicyError ? new UsageError(e.message) : e;
  }
  return { target: positionals[0] ?? '', keys: values.keys, json: values.json === true, maxBytes, help, version, witness, timestamps };
}

export async function loadKeys(source: string | undefined, maxBytes = DEFAULT_MAX_BYTES): Promise<TrustedKeySet> {
  if (source === undefined) return sandboxOnlyKeySet();
  let text: string;
  if (/^https?:\/\//i.test(source)) {
    let res: Response;
    try {
      res = await fetchService(source, { timeoutMs: KEYS_TIMEOUT_MS });
      text = (await readBodyCapped(res, source, maxBytes))!.toString('utf8');
    } catch (e) {
      if (e instanceof ReadRefused) throw new InputError(`keys: ${e.message}`);
      throw new InputError(`keys: ${e instanceof UnreachableError ? e.message : `could not read ${source}: ${unreachableReason(e, KEYS_TIMEOUT_MS)}`}`);
    }
    if (!res.ok) throw new InputError(`keys: ${refusalMessage(source, res.status, text)}`);
  } else {
    try {
      text = readCapped(source, maxBytes).toString('utf8');
    } catch (e) {
      throw e instanceof ReadRefused ? new InputError(`keys: ${e.message}`) : e;
    }
  }
  try {
    return trustedKeySet(parseJson(text));
  } catch (e) {
    throw new InputError(`keys: not a valid JWKS: ${(e as Error).message}`);
  }
}

const KEYS_TIMEOUT_MS = 10_000;

interface Report {
  source: string;
  action_key: string | null;
  result: VerifyResult;
}

function readBundleDir(dir: string, maxBytes: number): Record<string, Uint8Array> {
  const files: Record<string, Uint8Array> = {};
  for (const name of BUNDLE_FILE_NAMES) {
    const p = path.join(dir, name);
    // lstat, not exists: a link (even a dangling one) is refused, not taken for a missing file.
    if (lstatSync(p, { throwIfNoEntry: false })) files[name] = new Uint8Array(readCapped(p, maxBytes));
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

/** The service nests a bundle at its action key's segments, three today; leave room for more. */
const PACKAGE_DEPTH = 6;

function bundleFolders(dir: string, depth: number): string[] {
  const found: string[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (!d.isDirectory()) continue;
    const sub = path.join(dir, d.name);
    if (existsSync(path.join(sub, 'attestation.json'))) found.push(sub);
    else if (depth > 1) found.push(...bundleFolders(sub, depth - 1));
  }
  return found;
}

export async function verifyTarget(target: string, keys: TrustedKeySet, maxBytes = DEFAULT_MAX_BYTES): Promise<Report[]> {
  const st = lstatSync(target, { throwIfNoEntry: false });
  if (!st) throw new InputError(`no such file or folder ${target}`);
  if (st.isDirectory()) {
    if (lstatSync(path.join(target, 'attestation.json'), { throwIfNoEntry: false }) || lstatSync(path.join(target, 'payload.json'), { throwIfNoEntry: false })) {
      return [await bundleReport(target, keys, maxBytes)];
    }
    // A package (POST /evidence-packets/seal-bundle[/batch] as tar or zip): every folder under it
    // holding a bundle verifies independently. The service nests each bundle at its action key's
    // segments (law/proposed-action/01J…), so folders are searched a few levels deep.
    const subdirs = bundleFolders(target, PACKAGE_DEPTH).sort();
    if (subdirs.length === 0) throw new InputError(`${target} holds no seal bundle`);
    const reports: Report[] = [];
    for (const dir of subdirs) reports.push(await bundleReport(dir, keys, maxBytes));
    return reports;
  }
  let parsed: unknown;
  try {
    parsed = parseJson(readCapped(target, maxBytes).toString('utf8'));
  } catch (e) {
    if (e instanceof ReadRefused) throw new InputError(e.message);
    throw new InputError(`${target}: not JSON: ${(e as Error).message}`);
  }
  // A saved error answer (curl without --fail) is not evidence whose canonical form failed.
  const problem = problemOf(parsed);
  if (problem) throw new InputError(errorAnswerMessage(target, problem));
  const request = toVerifyRequest(parsed);
  const result = await verifyEvidence(request, keys);
  const actionKey = isRecord(request) && typeof request.action_key === 'string' ? request.action_key : null;
  return [{ source: target, action_key: actionKey, result }];
}

async function bundleReport(dir: string, keys: TrustedKeySet, maxBytes: number): Promise<Report> {
  let files: Record<string, Uint8Array>;
  try {
    files = readBundleDir(dir, maxBytes);
  } catch (e) {
    throw e instanceof ReadRefused ? new InputError(e.message) : e;
  }
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

/**
 * shared/verify.ts reports a check that could not run (its input already failed an earlier
 * check) as failed with a detail starting "not checked"; it is shown as SKIP so the report
 * points at the check that actually failed.
 */
export function outcome(c: Check): 'PASS' | 'FAIL' | 'SKIP' {
  if (c.ok) return 'PASS';
  return /^not checked\b/.test(c.detail) ? 'SKIP' : 'FAIL';
}

export function formatReport(r: Report): string {
  const lines = [`Evidence ${r.action_key ?? '(unknown action)'}  [${r.source}]`];
  const width = Math.max(...r.result.checks.map((c) => c.name.length));
  for (const c of r.result.checks) lines.push(`  ${outcome(c)}  ${c.name.padEnd(width)}  ${c.detail}`);
  const failed = r.result.checks.filter((c) => outcome(c) === 'FAIL').length;
  if (!r.result.verified) lines.push(`  RESULT: NOT VERIFIED (${failed} check${failed === 1 ? '' : 's'} failed)`);
  else if (r.result.key_status === 'sandbox') lines.push('  RESULT: VERIFIED as SANDBOX evidence (dev key): never production evidence');
  else lines.push(`  RESULT: VERIFIED (production key, ${r.result.key_status})`);
  return lines.join('\n');
}

async function verifyCommand(opts: Options, io: Io): Promise<number> {
  const keys = await loadKeys(opts.keys, opts.maxBytes);
  if (isRecordsExport(opts.target)) {
    if (!existsSync(opts.target)) throw new UsageError(`no such file ${opts.target}`);
    let summary;
    try {
      summary = await verifyRecordsExport(opts.target, keys, opts.maxBytes);
    } catch (e) {
      throw e instanceof ErrorAnswerFile || e instanceof ReadRefused ? new InputError(e.message) : e;
    }
    io.out(opts.json ? JSON.stringify(summary, null, 2) : formatExportSummary(summary));
    return summary.records > 0 && summary.failed === 0 ? 0 : 1;
  }
  // Inclusion proofs, epoch headers and consistency proofs: ./verify-proofs.ts.
  const proof = await verifyProofFile(opts.target, keys, opts.maxBytes);
  if (opts.witness && proof?.kind === 'consistency proof') {
    throw new UsageError('--witness-key and --min-cosignatures apply to an inclusion proof, an epoch header or a seal bundle folder');
  }
  if (proof && opts.witness && proof.value) proof.result = await applyWitnessPolicy(proof.value, proof.result, opts.witness);
  if (opts.timestamps && proof?.kind === 'consistency proof') {
    throw new UsageError('--tsa-roots and --min-timestamps apply to an inclusion proof, an epoch header or a seal bundle folder');
  }
  if (proof && opts.timestamps && proof.value) proof.result = await applyTimestampPolicy(proof.value, proof.result, opts.timestamps);
  if (proof) {
    io.out(opts.json ? JSON.stringify({ source: proof.source, kind: proof.kind, ...proof.result }, null, 2) : formatProofReport(proof));
    return proof.result.verified ? 0 : 1;
  }
  const reports = await verifyTarget(opts.target, keys, opts.maxBytes);
  if (opts.timestamps) {
    if (!lstatSync(opts.target).isDirectory()) throw new UsageError('--tsa-roots and --min-timestamps apply to an inclusion proof, an epoch header or a seal bundle folder');
    for (const r of reports) r.result = await applyBundleTimestampPolicy(r.source, r.result, opts.timestamps, keys, opts.maxBytes);
  }
  if (opts.witness) {
    if (!lstatSync(opts.target).isDirectory()) throw new UsageError('--witness-key and --min-cosignatures apply to an inclusion proof, an epoch header or a seal bundle folder');
    for (const r of reports) r.result = await applyBundleWitnessPolicy(r.source, r.result, opts.witness, keys, opts.maxBytes);
  }
  if (opts.json) {
    const body = reports.map((r) => ({
      source: r.source,
      action_key: r.action_key,
      ...r.result,
      checks: r.result.checks.map((c) => ({ ...c, outcome: outcome(c) })),
    }));
    io.out(JSON.stringify(body.length === 1 ? body[0] : body, null, 2));
  } else {
    io.out(reports.map(formatReport).join('\n\n'));
  }
  return reports.every((r) => r.result.verified) ? 0 : 1;
}

export async function main(argv: string[], out: (s: string) => void = console.log, err: (s: string) => void = console.error): Promise<number> {
  const io = { out, err };
  // Known before parsing, so even a malformed command line answers in JSON when asked to.
  const json = argv.includes('--json');
  try {
    const sub = argv[0] !== undefined ? SUBCOMMANDS[argv[0]] : undefined;
    if (sub) return await runSubcommand(sub, argv.slice(1), { ...io, json });
    const opts = parseVerifyArgs(argv);
    if (opts.help || opts.version) {
      out(opts.help ? USAGE : `svc-verify ${SERVICE_VERSION}`);
      return 0;
    }
    return await verifyCommand(opts, io);
  } catch (e) {
    if (!(e instanceof UsageError) && !(e instanceof InputError) && !(e instanceof ReadRefused)) throw e;
    const kind = e instanceof UsageError ? 'usage' : 'input';
    if (json) out(JSON.stringify({ error: { kind, message: e.message } }, null, 2));
    else err(kind === 'usage' ? `svc-verify: ${e.message}\n\n${USAGE}` : `svc-verify: ${e.message}`);
    return 2;
  }
}

async function runSubcommand(sub: Subcommand, argv: string[], io: Io & { json: boolean }): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...COMMON_OPTIONS, ...sub.options }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (parsed.values.help) {
    io.out(sub.usage);
    return 0;
  }
  return sub.run(parsed.values as Record<string, string | boolean | undefined>, parsed.positionals, io);
}

// Run when executed directly (`node --import tsx companion/cli/verify.ts`); the package bin
// (svc-verify.mjs) imports main() from the build instead.
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(`svc-verify: unexpected failure: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(2);
    },
  );
}
