/**
 * A witness stand-in on loopback speaking c2sp.org/tlog-witness "add-checkpoint": it checks the
 * request in the order the spec gives, keeps per origin the latest checkpoint it cosigned, and
 * answers c2sp.org/tlog-cosignature lines signed with its own key. `hold` parks requests so a
 * test can kill the companion while one is pending.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { getPublicKey } from '../../shared/ed25519.ts';
import { constantTimeEqual } from '../../shared/encoding.ts';
import { parseCheckpoint } from '../../shared/epoch.ts';
import { verifyConsistency } from '../../shared/merkle.ts';
import { NOTE_TYPE_COSIGNATURE_V1, formatVerifierKey, parseNote, parseVerifierKey, verifyNoteSignature } from '../../shared/note.ts';
import type { VerifierKey } from '../../shared/note.ts';
import { TLOG_SIZE_CONTENT_TYPE, cosign, parseAddCheckpointBody } from '../../shared/witness.ts';

export interface Seen {
  oldSize: number;
  proofLines: number;
  size: number | undefined;
  status: number;
}

export class WitnessStandIn {
  readonly name: string;
  readonly seed: Uint8Array;
  readonly publicKey: Uint8Array;
  readonly vkey: string;
  url = '';
  /** Per origin, the latest checkpoint it cosigned. */
  readonly state = new Map<string, { size: number; root: Uint8Array }>();
  readonly logs = new Map<string, VerifierKey>();
  readonly seen: Seen[] = [];
  #server: http.Server | undefined;
  #held: (() => void)[] = [];
  #holding = false;
  #heldWaiters: { n: number; resolve: () => void }[] = [];

  constructor(name: string, seedByte: number) {
    this.name = name;
    this.seed = new Uint8Array(32).fill(seedByte);
    this.publicKey = getPublicKey(this.seed);
    this.vkey = formatVerifierKey(name, NOTE_TYPE_COSIGNATURE_V1, this.publicKey);
  }

  /** The log's origin and its verifier key (type 0x01), as a witness operator configures them. */
  trustLog(origin: string, vkey: string): void {
    this.logs.set(origin, parseVerifierKey(vkey));
  }

  async listen(): Promise<void> {
    this.#server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void (async () => {
          if (this.#holding) {
            await new Promise<void>((resolve) => {
              this.#held.push(resolve);
              for (const w of [...this.#heldWaiters]) if (this.#held.length >= w.n) w.resolve();
            });
          }
          const answer = req.method === 'POST' && req.url === '/w/add-checkpoint' ? await this.addCheckpoint(Buffer.concat(chunks).toString('utf8')) : { status: 404, type: 'text/plain', text: 'not found\n' };
          if (!res.destroyed) res.writeHead(answer.status, { 'content-type': answer.type }).end(answer.text);
        })();
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/w`;
  }

  /** The protocol, check by check, in the order the spec gives them. */
  async addCheckpoint(body: string): Promise<{ status: number; type: string; text: string }> {
    const reply = (status: number, text = '', type = 'text/plain; charset=utf-8') => ({ status, type, text });
    let req;
    let cp;
    let note;
    try {
      req = parseAddCheckpointBody(body);
      cp = parseCheckpoint(req.checkpoint);
      note = parseNote(req.checkpoint);
    } catch {
      this.seen.push({ oldSize: -1, proofLines: 0, size: undefined, status: 400 });
      return reply(400, 'malformed request\n');
    }
    const record = (status: number) => this.seen.push({ oldSize: req.oldSize, proofLines: req.proof.length, size: cp.size, status });
    const key = this.logs.get(cp.origin);
    if (!key) return record(404), reply(404, 'unknown log\n');
    if (!(await verifyNoteSignature(note, key))) return record(403), reply(403, 'no trusted signature\n');
    if (req.oldSize > cp.size) return record(400), reply(400, 'old size beyond the checkpoint\n');
    // From here to the update there is no await: the check and the write are atomic.
    const latest = this.state.get(cp.origin) ?? { size: 0, root: new Uint8Array(0) };
    if (req.oldSize !== latest.size) return record(409), reply(409, `${latest.size}\n`, TLOG_SIZE_CONTENT_TYPE);
    if (req.oldSize === cp.size) {
      if (!constantTimeEqual(latest.root, cp.root)) return record(409), reply(409, `${latest.size}\n`, TLOG_SIZE_CONTENT_TYPE);
      if (req.proof.length !== 0) return record(422), reply(422, 'expected no proof for equal sizes\n');
    } else if (req.oldSize === 0) {
      if (req.proof.length !== 0) return record(422), reply(422, 'expected no proof from size 0\n');
    } else if (!verifyConsistency(req.oldSize, cp.size, latest.root, cp.root, req.proof)) {
      return record(422), reply(422, 'consistency proof does not verify\n');
    }
    this.state.set(cp.origin, { size: cp.size, root: cp.root });
    record(200);
    return reply(200, `${cosign(this.name, this.seed, this.publicKey, note.text, Math.floor(Date.now() / 1000))}\n`);
  }

  hold(): void {
    this.#holding = true;
  }
  /** Lets the held requests through (their clients may be gone by then). */
  release(): void {
    this.#holding = false;
    for (const r of this.#held.splice(0)) r();
  }
  waitForHeld(n: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.#held.length >= n) resolve();
      else this.#heldWaiters.push({ n, resolve });
    });
  }

  async close(): Promise<void> {
    this.release();
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()));
  }
}
