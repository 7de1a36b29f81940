/**
 * Production signing with an AWS KMS Ed25519 key (key spec ECC_NIST_EDWARDS25519, key usage
 * SIGN_VERIFY): KMS signs with SigningAlgorithm ED25519_SHA_512 and MessageType RAW, which is
 * pure Ed25519 over the message (RFC 8032 §5.1.6); the private key never leaves KMS.
 *
 * Why a worker thread: Signer.sign is synchronous because it runs inside the seal
 * transaction, and better-sqlite3 transactions are synchronous (evidence/sealer.ts); the SDK
 * is asynchronous. So the SDK runs on its own thread and the main thread blocks on
 * Atomics.wait over a SharedArrayBuffer until the answer is written, or the timeout passes.
 * The wait holds the event loop for at most SVC_KMS_TIMEOUT_MS per seal; an asynchronous
 * database writer would let the sealer await signatures instead and drop this bridge.
 *
 * A timeout or a KMS error refuses that seal with 503 (SignerUnavailableError) and the
 * savepoint leaves nothing stored; a timed-out worker is replaced, so its late answer can
 * never be mistaken for the next call's.
 */
import { Worker } from 'node:worker_threads';
import { keyId } from '../../../shared/keys.ts';
import { SignerSetupError, SignerUnavailableError, rawFromSpki } from '../signer.ts';
import type { Signer, SignerCustody } from '../signer.ts';

/** The shared buffer: Int32 control words, then the worker's JSON answer (aws-kms-worker.mjs). */
const LAYOUT = { state: 0, length: 1, ready: 2, controlWords: 3, dataOffset: 12, idle: 0, pending: 1, answered: 2 } as const;
const SHARED_BYTES = 16 * 1024;

type KmsRequest = { op: 'GetPublicKey'; keyId: string } | { op: 'Sign'; keyId: string; message: string };
type KmsAnswer =
  | { ok: true; keyArn: string; publicKey: string; keySpec: string; keyUsage: string; signingAlgorithms: string[] }
  | { ok: true; signature: string }
  | { ok: false; error: string };

export interface AwsKmsSignerOptions {
  keyId: string;
  region: string;
  endpoint: string | null;
  /** Per KMS call (SVC_KMS_TIMEOUT_MS). */
  timeoutMs: number;
}

/**
 * How long a new client thread may take to load the SDK (~0.5 s; a replacement usually loads
 * between seals). Bounded, because a thread that dies while loading cannot tell a blocked caller.
 */
const THREAD_START_TIMEOUT_MS = 10_000;

export function openAwsKmsSigner(o: AwsKmsSignerOptions): Signer {
  const bridge = new KmsBridge(o.region, o.endpoint);
  try {
    const answer = bridge.call({ op: 'GetPublicKey', keyId: o.keyId }, o.timeoutMs);
    if (!answer.ok) throw new SignerSetupError(`AWS KMS GetPublicKey for ${o.keyId} failed: ${answer.error}`);
    if (!('publicKey' in answer)) throw new SignerSetupError('AWS KMS GetPublicKey answered without a public key');
    if (answer.keySpec !== 'ECC_NIST_EDWARDS25519' || answer.keyUsage !== 'SIGN_VERIFY' || !answer.signingAlgorithms.includes('ED25519_SHA_512')) {
      throw new SignerSetupError(
        `AWS KMS key ${o.keyId} is ${answer.keySpec || 'of no key spec'}/${answer.keyUsage || 'no usage'}: production receipts need an ECC_NIST_EDWARDS25519 SIGN_VERIFY key that offers ED25519_SHA_512`,
      );
    }
    // GetPublicKey returns a DER SubjectPublicKeyInfo (RFC 8410 §4); we publish the raw key.
    const publicKey = rawFromSpki(Buffer.from(answer.publicKey, 'base64'));
    if (!publicKey) throw new SignerSetupError(`AWS KMS key ${o.keyId} did not return an Ed25519 SubjectPublicKeyInfo`);
    return new AwsKmsSigner(bridge, o, publicKey, {
      kind: 'aws-kms',
      managed: true,
      nonExportable: true,
      locators: { key_id: o.keyId, key_arn: answer.keyArn, region: o.region, ...(o.endpoint ? { endpoint: o.endpoint } : {}) },
      description: 'an AWS KMS ECC_NIST_EDWARDS25519 key: KMS signs (ED25519_SHA_512, RAW); KMS never exports the private key',
    });
  } catch (err) {
    bridge.close();
    throw err;
  }
}

class AwsKmsSigner implements Signer {
  readonly keyId: string;
  readonly devKey = false;
  readonly #bridge: KmsBridge;
  readonly #kmsKeyId: string;
  readonly #timeoutMs: number;

  constructor(bridge: KmsBridge, o: AwsKmsSignerOptions, readonly publicKey: Uint8Array, readonly custody: SignerCustody) {
    this.#bridge = bridge;
    this.#kmsKeyId = o.keyId;
    this.#timeoutMs = o.timeoutMs;
    this.keyId = keyId(publicKey);
  }

  sign(message: Uint8Array): Uint8Array {
    const answer = this.#bridge.call({ op: 'Sign', keyId: this.#kmsKeyId, message: Buffer.from(message).toString('base64') }, this.#timeoutMs);
    if (!answer.ok) throw new SignerUnavailableError('aws-kms', answer.error);
    const signature = 'signature' in answer ? Buffer.from(answer.signature, 'base64') : Buffer.alloc(0);
    if (signature.length !== 64) throw new SignerUnavailableError('aws-kms', `KMS returned a ${signature.length}-byte signature, not Ed25519`);
    return new Uint8Array(signature);
  }

  close(): void {
    this.#bridge.close();
  }

  toJSON(): Record<string, unknown> {
    return { keyId: this.keyId, custody: this.custody };
  }
}

/** One SDK worker thread and its shared buffer; replaced whole after a timeout. */
class KmsBridge {
  readonly #region: string;
  readonly #endpoint: string | null;
  #worker: { thread: Worker; control: Int32Array; data: Uint8Array } | undefined;

  constructor(region: string, endpoint: string | null) {
    this.#region = region;
    this.#endpoint = endpoint;
    this.#worker = this.#spawn();
  }

  call(req: KmsRequest, timeoutMs: number): KmsAnswer {
    this.#worker ??= this.#spawn();
    const { thread, control, data } = this.#worker;
    // A new thread first loads the SDK: SVC_KMS_TIMEOUT_MS bounds the KMS call, not that.
    Atomics.wait(control, LAYOUT.ready, 0, THREAD_START_TIMEOUT_MS);
    if (Atomics.load(control, LAYOUT.ready) !== 1) {
      this.#replace();
      return { ok: false, error: 'the KMS client thread did not start' };
    }
    Atomics.store(control, LAYOUT.state, LAYOUT.pending);
    thread.postMessage(req);
    // Blocks this thread (see the module comment); the worker's event loop runs meanwhile.
    Atomics.wait(control, LAYOUT.state, LAYOUT.pending, timeoutMs);
    if (Atomics.load(control, LAYOUT.state) !== LAYOUT.answered) {
      this.#replace();
      return { ok: false, error: `no answer within ${timeoutMs} ms` };
    }
    const length = Atomics.load(control, LAYOUT.length);
    Atomics.store(control, LAYOUT.state, LAYOUT.idle);
    try {
      return JSON.parse(Buffer.from(data.subarray(0, length)).toString('utf8')) as KmsAnswer;
    } catch {
      return { ok: false, error: 'unreadable answer from the KMS client thread' };
    }
  }

  close(): void {
    const w = this.#worker;
    this.#worker = undefined;
    if (w) void w.thread.terminate();
  }

  /** Ends a worker that may still answer a call we gave up on, and starts its successor now. */
  #replace(): void {
    this.close();
    this.#worker = this.#spawn();
  }

  #spawn(): { thread: Worker; control: Int32Array; data: Uint8Array } {
    const shared = new SharedArrayBuffer(SHARED_BYTES);
    const workerData = { shared, layout: LAYOUT, region: this.#region, endpoint: this.#endpoint };
    // Plain JavaScript beside this module, in the sources and in dist/ alike (scripts/build.mjs).
    const thread = new Worker(new URL('./aws-kms-worker.mjs', import.meta.url), { workerData });
    // A failing worker must never take the process down: the next call finds it gone (or
    // times out) and starts another.
    thread.on('error', () => {
      if (this.#worker?.thread === thread) this.#worker = undefined;
    });
    // Shutdown does not wait for an idle SDK thread.
    thread.unref();
    return { thread, control: new Int32Array(shared, 0, LAYOUT.controlWords), data: new Uint8Array(shared, LAYOUT.dataOffset) };
  }
}
