/**
 * The AWS KMS client's own thread (signers/aws-kms.ts explains why there is one). It serves
 * one call at a time: the main thread posts a request, then sleeps in Atomics.wait on the
 * shared control word until this thread writes the JSON answer into the shared buffer and
 * notifies it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { GetPublicKeyCommand, KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { CONTROL, DATA_OFFSET, STATE } from './aws-kms-protocol.ts';
import type { KmsAnswer, KmsRequest, KmsWorkerData } from './aws-kms-protocol.ts';

const { shared, region, endpoint } = workerData as KmsWorkerData;
const control = new Int32Array(shared, 0, CONTROL.length);
const data = new Uint8Array(shared, DATA_OFFSET);
// One attempt: a retry with backoff would hold the seal transaction longer than the timeout
// the main thread waits; the caller retries the whole seal instead (503).
const client = new KMSClient({ region, maxAttempts: 1, ...(endpoint ? { endpoint } : {}) });

async function answer(req: KmsRequest): Promise<KmsAnswer> {
  try {
    if (req.op === 'GetPublicKey') {
      const out = await client.send(new GetPublicKeyCommand({ KeyId: req.keyId }));
      return {
        ok: true,
        keyArn: out.KeyId ?? req.keyId,
        publicKey: Buffer.from(out.PublicKey ?? []).toString('base64'),
        keySpec: out.KeySpec ?? '',
        keyUsage: out.KeyUsage ?? '',
        signingAlgorithms: out.SigningAlgorithms ?? [],
      };
    }
    const out = await client.send(
      new SignCommand({ KeyId: req.keyId, Message: Buffer.from(req.message, 'base64'), MessageType: 'RAW', SigningAlgorithm: 'ED25519_SHA_512' }),
    );
    return { ok: true, signature: Buffer.from(out.Signature ?? []).toString('base64') };
  } catch (err) {
    // The error's name only (KMSInvalidStateException, AccessDeniedException, TimeoutError…):
    // its message may quote request details.
    const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
    const status = e.$metadata?.httpStatusCode;
    return { ok: false, error: `${e.name ?? 'Error'}${status ? ` (HTTP ${status})` : ''}` };
  }
}

parentPort!.on('message', (req: KmsRequest) => {
  void answer(req).then((a) => {
    const bytes = Buffer.from(JSON.stringify(a));
    const fits = bytes.length <= data.length;
    const body = fits ? bytes : Buffer.from(JSON.stringify({ ok: false, error: 'answer too large' } satisfies KmsAnswer));
    data.set(body);
    Atomics.store(control, CONTROL.length_index, body.length);
    Atomics.store(control, CONTROL.state_index, STATE.answered);
    Atomics.notify(control, CONTROL.state_index);
  });
});
