/**
 * A loopback stand-in for the AWS KMS JSON protocol (awsJson1_1: POST /, X-Amz-Target
 * TrentService.<Operation>, Content-Type application/x-amz-json-1.1), holding a real Ed25519
 * key. It runs in its own process: the companion blocks its thread while KMS signs
 * (core/signers/aws-kms.ts), so a stand-in on the test's thread could never answer.
 *
 * IPC from the parent: { mode: 'ok' | 'error' | 'hang' } and { requests: true }; it answers
 * { port, publicKey } once listening, { requests: [...] } and { mode } acknowledgements.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import http from 'node:http';

const KEY_ARN = 'arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const spki = publicKey.export({ format: 'der', type: 'spki' });

let mode: 'ok' | 'error' | 'hang' = 'ok';
const requests: { target: string; contentType: string; authorization: string; body: Record<string, unknown> }[] = [];
const held: http.ServerResponse[] = [];

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const target = String(req.headers['x-amz-target'] ?? '');
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    requests.push({ target, contentType: String(req.headers['content-type'] ?? ''), authorization: String(req.headers.authorization ?? ''), body });
    const reply = (status: number, json: unknown) => {
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(json));
    };
    if (target === 'TrentService.GetPublicKey') {
      if (body.KeyId === 'alias/missing') return reply(400, { __type: 'NotFoundException', message: 'Alias is not found.' });
      return reply(200, {
        KeyId: KEY_ARN,
        KeySpec: 'ECC_NIST_EDWARDS25519',
        KeyUsage: 'SIGN_VERIFY',
        PublicKey: spki.toString('base64'),
        SigningAlgorithms: ['ED25519_SHA_512', 'ED25519_PH_SHA_512'],
      });
    }
    if (target !== 'TrentService.Sign') return reply(400, { __type: 'UnsupportedOperationException', message: 'not in this stand-in' });
    if (mode === 'hang') return void held.push(res);
    if (mode === 'error') return reply(400, { __type: 'KMSInvalidStateException', message: `${KEY_ARN} is pending deletion.` });
    const message = Buffer.from(String(body.Message), 'base64');
    reply(200, { KeyId: KEY_ARN, Signature: sign(null, message, privateKey).toString('base64'), SigningAlgorithm: body.SigningAlgorithm });
  });
});

process.on('message', (m: { mode?: typeof mode; requests?: true }) => {
  if (m.mode) {
    mode = m.mode;
    process.send!({ mode });
  }
  if (m.requests) process.send!({ requests: requests.splice(0) });
});
process.on('disconnect', () => {
  for (const res of held) res.destroy();
  server.close();
  process.exit(0);
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.send!({ port, publicKey: spki.subarray(12).toString('base64') });
});
