// The AWS KMS client's own thread (signers/aws-kms.ts explains why there is one). Plain
// JavaScript, so the same file runs from the sources and from dist/ without a TypeScript
// loader (Node 20 applies none to a worker's entry). It serves one call at a time: the main
// thread posts a request and sleeps in Atomics.wait on the shared state word until this
// thread writes the JSON answer into the shared buffer and notifies it. The buffer's layout
// arrives in workerData (aws-kms.ts LAYOUT).
import { parentPort, workerData } from 'node:worker_threads';
import { GetPublicKeyCommand, KMSClient, SignCommand } from '@aws-sdk/client-kms';

const { shared, layout, region, endpoint } = workerData;
const control = new Int32Array(shared, 0, layout.controlWords);
const data = new Uint8Array(shared, layout.dataOffset);
// One attempt: a retry with backoff would hold the seal transaction past the timeout the main
// thread waits; the caller retries the whole seal instead (503).
const client = new KMSClient({ region, maxAttempts: 1, ...(endpoint ? { endpoint } : {}) });

async function answer(req) {
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
    // The error's name and system code only (KMSInvalidStateException, AccessDeniedException,
    // Error ECONNREFUSED…): its message may quote request details.
    const status = err?.$metadata?.httpStatusCode;
    const code = typeof err?.code === 'string' && /^[A-Z0-9_]{1,40}$/.test(err.code) ? ` ${err.code}` : '';
    return { ok: false, error: `${err?.name ?? 'Error'}${code}${status ? ` (HTTP ${status})` : ''}` };
  }
}

function reply(a) {
  let body = Buffer.from(JSON.stringify(a));
  if (body.length > data.length) body = Buffer.from(JSON.stringify({ ok: false, error: 'answer too large' }));
  data.set(body);
  Atomics.store(control, layout.length, body.length);
  Atomics.store(control, layout.state, layout.answered);
  Atomics.notify(control, layout.state);
}

parentPort.on('message', (req) => void answer(req).then(reply));

// Loaded: from now on SVC_KMS_TIMEOUT_MS bounds each call alone.
Atomics.store(control, layout.ready, 1);
Atomics.notify(control, layout.ready);
