/**
 * Loopback stand-ins for the two secret managers the companion resolves references through,
 * each speaking its documented wire format:
 *
 * - AWS Secrets Manager, AWS JSON 1.1 protocol: POST /, Content-Type
 *   application/x-amz-json-1.1, X-Amz-Target secretsmanager.GetSecretValue, body
 *   {"SecretId": …}; answers {ARN, Name, VersionId, SecretString, VersionStages, CreatedDate},
 *   or 400 {"__type":"ResourceNotFoundException", …} for an unknown secret.
 * - HashiCorp Vault, KV secrets engine version 2: GET /v1/{mount}/data/{path} with
 *   X-Vault-Token; answers {"data":{"data":{…},"metadata":{…}}}, 403 {"errors":["permission
 *   denied"]} for a wrong token, 404 {"errors":[]} for an unknown path.
 *
 * Both run on the test's own thread: the companion's secret resolution is asynchronous.
 */
import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface StandIn {
  url: string;
  requests: SeenRequest[];
  /** Leaves every later request unanswered until close() (a secret manager that does not answer). */
  hang(): void;
  close(): Promise<void>;
}

function serve(handle: (req: SeenRequest, res: http.ServerResponse) => void): Promise<StandIn> {
  const requests: SeenRequest[] = [];
  const held: http.ServerResponse[] = [];
  let hanging = false;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(seen);
      if (hanging) return void held.push(res);
      handle(seen, res);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        hang: () => void (hanging = true),
        close: () =>
          new Promise<void>((done) => {
            for (const res of held) res.destroy();
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    }),
  );
}

const ARN_PREFIX = 'arn:aws:secretsmanager:us-east-1:111122223333:secret:';

/** secrets: SecretId (name) → SecretString. */
export function secretsManagerStandIn(secrets: Record<string, string>): Promise<StandIn> {
  return serve((req, res) => {
    const reply = (status: number, json: unknown) => {
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': 'stand-in-request' });
      res.end(JSON.stringify(json));
    };
    if (req.method !== 'POST' || req.headers['x-amz-target'] !== 'secretsmanager.GetSecretValue') {
      return reply(400, { __type: 'UnknownOperationException', message: 'not in this stand-in' });
    }
    const { SecretId } = JSON.parse(req.body) as { SecretId: string };
    const name = SecretId.startsWith(ARN_PREFIX) ? SecretId.slice(ARN_PREFIX.length).replace(/-[A-Za-z0-9]{6}$/, '') : SecretId;
    const value = secrets[name];
    if (value === undefined) return reply(400, { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." });
    reply(200, {
      ARN: `${ARN_PREFIX}${name}-AbCdEf`,
      Name: name,
      VersionId: 'a1b2c3d4-5678-90ab-cdef-EXAMPLE11111',
      SecretString: value,
      VersionStages: ['AWSCURRENT'],
      CreatedDate: 1_700_000_000.5,
    });
  });
}

/** secrets: "mount/path" → the secret's data object; token: the one X-Vault-Token accepted. */
export function vaultStandIn(secrets: Record<string, Record<string, string>>, token: string): Promise<StandIn> {
  return serve((req, res) => {
    const reply = (status: number, json: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(json));
    };
    if (req.headers['x-vault-token'] !== token) return reply(403, { errors: ['permission denied'] });
    const m = /^\/v1\/([^/]+)\/data\/(.+)$/.exec(req.url);
    if (req.method !== 'GET' || !m) return reply(404, { errors: [] });
    const data = secrets[`${decodeURIComponent(m[1]!)}/${m[2]!.split('/').map(decodeURIComponent).join('/')}`];
    if (data === undefined) return reply(404, { errors: [] });
    reply(200, {
      request_id: 'stand-in-request',
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      data: { data, metadata: { created_time: '2026-01-01T00:00:00.000000Z', custom_metadata: null, deletion_time: '', destroyed: false, version: 1 } },
      wrap_info: null,
      warnings: null,
      auth: null,
    });
  });
}

const sha256Hex = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

/**
 * Whether a request carries a valid AWS Signature Version 4 for `secretAccessKey` (AWS
 * "Create a signed AWS API request": canonical request, string to sign, derived signing key),
 * recomputed here independently of the SDK that signed it. The request path is / with no query
 * (the JSON protocols post every operation there).
 */
export function sigV4Valid(req: SeenRequest, secretAccessKey: string): { valid: boolean; accessKeyId: string; region: string; service: string } {
  const auth = String(req.headers.authorization ?? '');
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return { valid: false, accessKeyId: '', region: '', service: '' };
  const [, accessKeyId, date, region, service, signedHeaders, signature] = m as unknown as string[];
  const names = signedHeaders!.split(';');
  const canonicalHeaders = names.map((n) => `${n}:${String(req.headers[n] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonicalRequest = [req.method, req.url.split('?')[0], req.url.split('?')[1] ?? '', canonicalHeaders, signedHeaders, sha256Hex(req.body)].join('\n');
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date!), region!), service!), 'aws4_request');
  const expected = createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
  return { valid: expected === signature && amzDate.startsWith(date!), accessKeyId: accessKeyId!, region: region!, service: service! };
}
