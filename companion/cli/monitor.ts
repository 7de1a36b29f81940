/**
 * `svc-verify monitor`: watches the log of epoch digests for a split view. It keeps the last
 * checkpoint it accepted in a state file; each run takes the log's current checkpoint (GET
 * <url>/checkpoint, or a file), checks the log's signature on it, and checks it is consistent
 * with the one kept: same size, same root; larger, an RFC 9162 §2.1.4.2 consistency proof
 * (GET <url>/epochs/consistency) from the kept root to the new one, both roots taken from the
 * signed checkpoints, never from the proof's own answer. A log that signed two checkpoints
 * that cannot both be true has shown two histories: the run reports a split view with both
 * signed checkpoints as evidence, exits 1 and keeps the old state.
 *
 * Exit codes: 0 consistent (state advanced) or first run (state written), 1 split view or a
 * checkpoint whose signature or cosignatures fail, 2 usage, input or network error.
 */
import fs from 'node:fs';
import path from 'node:path';
import { constantTimeEqual, toHex, utf8 } from '../../shared/encoding.ts';
import { verifyEd25519 } from '../../shared/ed25519.ts';
import { noteKeyHash, parseCheckpoint } from '../../shared/epoch.ts';
import type { ParsedCheckpoint } from '../../shared/epoch.ts';
import { assertConsistency, proofFromHex } from '../../shared/merkle.ts';
import { parseNote, parseVerifierKey, verifyNoteSignature } from '../../shared/note.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { checkCosignatures } from '../../shared/witness.ts';
import type { WitnessPolicy } from '../../shared/witness.ts';
import { refusalMessage } from './problem-answer.ts';
import { ServiceUrlError, UnreachableError, fetchService, serviceUrl, unreachableReason } from './service-url.ts';
import type { Io, Subcommand } from './verify.ts';
import { ReadRefused, maxBytesSetting, readBodyCapped, readCapped } from './verify-read.ts';
import { WITNESS_OPTIONS, WITNESS_USAGE, WitnessPolicyError, witnessPolicyOf } from './verify-witness.ts';

export const MONITOR_USAGE = `       svc-verify monitor --state <file> [--url <base url> | --checkpoint <file> [--proof <file>]] (--keys <jwks> | --log-key <vkey>)`;

const USAGE = `usage: svc-verify monitor --state <file> [--url <base url>] [--checkpoint <file> [--proof <file>]]
                         (--keys <jwks file or URL> | --log-key <vkey>) [--json]

  Checks the log's current checkpoint against the last one it accepted (kept in --state) and
  reports a split view, with both signed checkpoints as evidence, when they cannot both be true.
  --state       the file holding the last accepted checkpoint (made on the first run)
  --url         the companion's base URL (default: SVC_URL, else http://127.0.0.1:8787); the
                checkpoint is GET <url>/checkpoint, the proof GET <url>/epochs/consistency
  --checkpoint  take the new checkpoint from this file instead of the companion
  --proof       with --checkpoint and no --url: the consistency proof (GET /epochs/consistency answer)
  --keys        the service's published keys (/.well-known/service-keys.json): the checkpoint's
                origin svc/epochs/<key_id> names the key that must sign it
  --log-key     or the log's verifier key (<origin>+<key id>+<base64>, type 0x01)
${WITNESS_USAGE}
exit status: 0 consistent (or first run), 1 split view or a bad signature, 2 usage or network error`;

class MonitorUsage extends Error {}
class MonitorInput extends Error {}

const STATE_FORMAT = 'svc.monitor-state/v1';
const TIMEOUT_MS = 10_000;

interface Args {
  state: string;
  url: string | undefined;
  checkpointFile: string | undefined;
  proofFile: string | undefined;
  keys: string | undefined;
  logKey: string | undefined;
  policy: WitnessPolicy | undefined;
  maxBytes: number;
}

export type MonitorStatus = 'first_run' | 'unchanged' | 'consistent' | 'stale' | 'split_view' | 'bad_checkpoint';

export interface MonitorReport {
  status: MonitorStatus;
  origin: string;
  detail: string;
  seen?: { size: number; root: string; checkpoint: string } | undefined;
  current: { size: number; root: string; checkpoint: string };
}

export const MONITOR_SUBCOMMAND: Subcommand = {
  usage: USAGE,
  options: {
    state: { type: 'string' },
    url: { type: 'string' },
    checkpoint: { type: 'string' },
    proof: { type: 'string' },
    keys: { type: 'string' },
    'log-key': { type: 'string' },
    ...WITNESS_OPTIONS,
  },
  run: (values, positionals, io) => monitorCommand(values, positionals, io),
};

async function monitorCommand(values: Record<string, unknown>, positionals: string[], io: Io & { json: boolean }): Promise<number> {
  try {
    const args = parseMonitorArgs(values, positionals);
    const report = await monitor(args);
    io.out(io.json ? JSON.stringify(report, null, 2) : formatReport(report));
    return report.status === 'split_view' || report.status === 'bad_checkpoint' ? 1 : 0;
  } catch (e) {
    if (!(e instanceof MonitorUsage || e instanceof MonitorInput || e instanceof ReadRefused || e instanceof ServiceUrlError || e instanceof UnreachableError)) throw e;
    if (io.json) io.out(JSON.stringify({ error: { kind: e instanceof MonitorUsage ? 'usage' : 'input', message: e.message } }, null, 2));
    else io.err(`svc-verify monitor: ${e.message}${e instanceof MonitorUsage ? `\n\n${USAGE}` : ''}`);
    return 2;
  }
}

function parseMonitorArgs(values: Record<string, unknown>, positionals: string[]): Args {
  const str = (k: string) => (typeof values[k] === 'string' && values[k] !== '' ? (values[k] as string) : undefined);
  if (positionals.length > 0) throw new MonitorUsage(`unexpected argument ${positionals[0]}`);
  const state = str('state');
  if (!state) throw new MonitorUsage('missing --state <file>');
  const keys = str('keys');
  const logKey = str('log-key');
  if (!keys && !logKey) throw new MonitorUsage('missing --keys <jwks> or --log-key <vkey>: the checkpoint signature must be checked');
  const cap = maxBytesSetting(str('max-bytes'));
  if (typeof cap !== 'number') throw new MonitorUsage(cap.problem);
  let policy: WitnessPolicy | undefined;
  try {
    policy = witnessPolicyOf(values);
  } catch (e) {
    throw e instanceof WitnessPolicyError ? new MonitorUsage(e.message) : e;
  }
  const checkpointFile = str('checkpoint');
  const proofFile = str('proof');
  if (proofFile && !checkpointFile) throw new MonitorUsage('--proof goes with --checkpoint');
  // Without a checkpoint file the companion is asked: --url, else SVC_URL, else the default.
  const url = str('url') ?? (checkpointFile ? undefined : serviceUrl(undefined, process.env));
  return { state, url: url === undefined ? undefined : serviceUrl(url, {}), checkpointFile, proofFile, keys, logKey, policy, maxBytes: cap };
}

async function getText(url: string, maxBytes: number): Promise<string> {
  let res: Response;
  let body: Buffer | undefined;
  try {
    res = await fetchService(url, { timeoutMs: TIMEOUT_MS });
    body = await readBodyCapped(res, url, maxBytes);
  } catch (e) {
    if (e instanceof ReadRefused || e instanceof UnreachableError) throw e;
    throw new MonitorInput(`could not read ${url}: ${unreachableReason(e, TIMEOUT_MS)}`);
  }
  const text = (body ?? Buffer.alloc(0)).toString('utf8');
  if (!res.ok) throw new MonitorInput(refusalMessage(url, res.status, text));
  return text;
}

/** Whether the log's key signed this checkpoint (the origin's own signature line). */
async function logSigned(note: string, cp: ParsedCheckpoint, args: Args): Promise<string | undefined> {
  if (args.logKey) {
    let key;
    try {
      key = parseVerifierKey(args.logKey);
    } catch (e) {
      throw new MonitorUsage(`--log-key: ${(e as Error).message}`);
    }
    if (key.name !== cp.origin) return `the checkpoint's origin ${cp.origin} is not the log key's name ${key.name}`;
    return (await verifyNoteSignature(parseNote(note), key)) ? undefined : `no signature of ${key.name} verifies on the checkpoint`;
  }
  const text = /^https?:\/\//i.test(args.keys!) ? await getText(args.keys!, args.maxBytes) : readCapped(args.keys!, args.maxBytes).toString('utf8');
  let keys;
  try {
    keys = trustedKeySet(JSON.parse(text));
  } catch (e) {
    throw new MonitorInput(`keys: not a valid JWKS: ${(e as Error).message}`);
  }
  const kid = /^svc\/epochs\/(.+)$/.exec(cp.origin)?.[1];
  const key = kid === undefined ? undefined : keys.get(kid);
  if (!key) return `the checkpoint's origin ${cp.origin} names no key in the trusted key set`;
  for (const sig of cp.signatures) {
    if (sig.name !== cp.origin || !constantTimeEqual(sig.keyHash, noteKeyHash(sig.name, key.publicKey))) continue;
    if (await verifyEd25519(key.publicKey, utf8(cp.body), sig.signature)) return undefined;
  }
  return `no signature of key ${key.kid} verifies on the checkpoint`;
}

function readState(file: string, maxBytes: number): string | undefined {
  if (!fs.existsSync(file)) return undefined;
  let state: unknown;
  try {
    state = JSON.parse(readCapped(file, maxBytes).toString('utf8'));
  } catch (e) {
    if (e instanceof ReadRefused) throw e;
    throw new MonitorInput(`${file}: not a monitor state file (JSON)`);
  }
  const s = state as { format?: unknown; checkpoint?: unknown };
  if (s?.format !== STATE_FORMAT || typeof s.checkpoint !== 'string') throw new MonitorInput(`${file}: not a monitor state file (format ${STATE_FORMAT})`);
  return s.checkpoint;
}

/** Written to a temporary file then renamed: a crash mid-write never leaves half a state. */
function writeState(file: string, checkpoint: string): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  fs.writeFileSync(tmp, `${JSON.stringify({ format: STATE_FORMAT, checkpoint, accepted_at: new Date().toISOString() }, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

const head = (note: string, cp: ParsedCheckpoint) => ({ size: cp.size, root: toHex(cp.root), checkpoint: note });

export async function monitor(args: Args): Promise<MonitorReport> {
  const note = args.checkpointFile ? readCapped(args.checkpointFile, args.maxBytes).toString('utf8') : await getText(`${args.url}/checkpoint`, args.maxBytes);
  let cp: ParsedCheckpoint;
  try {
    cp = parseCheckpoint(note);
    parseNote(note);
  } catch (e) {
    throw new MonitorInput(`the checkpoint is malformed: ${(e as Error).message}`);
  }
  const current = head(note, cp);
  const bad = await logSigned(note, cp, args);
  if (bad) return { status: 'bad_checkpoint', origin: cp.origin, detail: bad, current };
  if (args.policy) {
    const c = await checkCosignatures(note, args.policy);
    if (!c.ok) return { status: 'bad_checkpoint', origin: cp.origin, detail: `witness_cosignatures: ${c.detail}`, current };
  }

  const seenNote = readState(args.state, args.maxBytes);
  if (seenNote === undefined) {
    writeState(args.state, note);
    return { status: 'first_run', origin: cp.origin, detail: `first checkpoint accepted: size ${cp.size}`, current };
  }
  const seenCp = parseCheckpoint(seenNote);
  const seen = head(seenNote, seenCp);
  if (seenCp.origin !== cp.origin) {
    return { status: 'bad_checkpoint', origin: cp.origin, detail: `the checkpoint is of origin ${cp.origin}, the state's of ${seenCp.origin}: a new log (signing key), start a new state file`, seen, current };
  }
  const split = (detail: string): MonitorReport => ({ status: 'split_view', origin: cp.origin, detail, seen, current });
  if (seenCp.size === cp.size) {
    if (constantTimeEqual(seenCp.root, cp.root)) return { status: 'unchanged', origin: cp.origin, detail: `size ${cp.size}, same root`, seen, current };
    return split(`two signed checkpoints of size ${cp.size} with different roots`);
  }
  const [older, newer] = seenCp.size < cp.size ? [seenCp, cp] : [cp, seenCp];
  const proof = await consistencyProof(args, older.size, newer.size);
  try {
    assertConsistency(older.size, newer.size, older.root, newer.root, proofFromHex(proof as string[]));
  } catch (e) {
    return split(`the checkpoint of size ${newer.size} is not an extension of the one of size ${older.size}: ${(e as Error).message}`);
  }
  if (cp.size < seenCp.size) return { status: 'stale', origin: cp.origin, detail: `the log served size ${cp.size}, older than the size ${seenCp.size} seen; consistent, state kept`, seen, current };
  writeState(args.state, note);
  return { status: 'consistent', origin: cp.origin, detail: `size ${seenCp.size} → ${cp.size}: consistent (RFC 9162 §2.1.4.2)`, seen, current };
}

/** The proof hashes between two sizes of the epoch log (sizes are epoch_seq + 1). */
async function consistencyProof(args: Args, from: number, to: number): Promise<unknown> {
  let text: string;
  if (args.url) text = await getText(`${args.url}/epochs/consistency?from=${from - 1}&to=${to - 1}`, args.maxBytes);
  else if (args.proofFile) text = readCapped(args.proofFile, args.maxBytes).toString('utf8');
  else throw new MonitorUsage(`sizes ${from} and ${to} differ: a consistency proof is needed (--url, or --proof with --checkpoint)`);
  let body: { from?: { size?: unknown }; to?: { size?: unknown }; proof?: unknown };
  try {
    body = JSON.parse(text);
  } catch {
    throw new MonitorInput('the consistency proof is not JSON');
  }
  if (body?.from?.size !== from || body?.to?.size !== to) throw new MonitorInput(`the consistency proof is not between sizes ${from} and ${to}`);
  return body.proof;
}

function formatReport(r: MonitorReport): string {
  const lines = [`Checkpoint monitor  [${r.origin}]`, `  ${r.status === 'split_view' ? 'SPLIT VIEW' : r.status.toUpperCase().replace('_', ' ')}  ${r.detail}`];
  if (r.status === 'split_view' && r.seen) {
    lines.push('  evidence: the checkpoint seen before', ...r.seen.checkpoint.trimEnd().split('\n').map((l) => `    ${l}`));
    lines.push('  evidence: the checkpoint served now', ...r.current.checkpoint.trimEnd().split('\n').map((l) => `    ${l}`));
  }
  return lines.join('\n');
}
