/**
 * Admin export: `npm run export -- records --from <t> --to <t> --out <file.ndjson>
 *   [--url http://127.0.0.1:8787]` with the tenant's key in SVC_API_KEY; the companion's base
 * URL is --url, else SVC_URL, as in every CLI (./service-url.ts).
 *
 * Pages GET /tenant/exports/records as NDJSON until a page comes back empty (interface-spec
 * Tenant exports), streaming each page to disk: memory stays flat however large the range.
 * The file is written beside its final name and renamed only when the export completed, so a
 * file at --out is always a whole export. A progress bar shows on a terminal; the final count
 * is always printed. Verify the result offline with `svc-verify <file.ndjson>`.
 * Exit codes: 0 exported, 1 the service refused, failed or could not be reached, 2 usage error.
 */
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SingleBar } from 'cli-progress';
import { refusalMessage } from './problem-answer.ts';
import { DEFAULT_SERVICE_URL, SERVICE_URL_ENV, ServiceUrlError, fetchService, serviceUrl, unreachableReason } from './service-url.ts';

const USAGE = `usage: npm run export -- records --out <file.ndjson> [--from <RFC 3339>] [--to <RFC 3339>] [--url <base URL>]

  records      export sealed records (from <= recorded_at < to) as NDJSON, one record per line
  --out        the file to write (replaced only when the export completes)
  --from/--to  half-open range on the signed recorded_at; default: the whole log
  --url        the companion's base URL (default: ${SERVICE_URL_ENV}, else ${DEFAULT_SERVICE_URL})

The tenant's API key is read from SVC_API_KEY (never from the command line, which other users
and shell history can read).`;

class UsageError extends Error {}

interface Options {
  out: string;
  from: string | undefined;
  to: string | undefined;
  url: string;
  key: string;
}

export function parseExportArgs(argv: string[], env: NodeJS.ProcessEnv): Options {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { out: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, url: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) throw new UsageError('');
  if (positionals.length !== 1 || positionals[0] !== 'records') throw new UsageError(`expected the export kind "records", got ${JSON.stringify(positionals.join(' '))}`);
  if (!values.out) throw new UsageError('--out <file.ndjson> is required');
  const key = env.SVC_API_KEY;
  if (!key) throw new UsageError('set SVC_API_KEY to the tenant API key');
  let url: string;
  try {
    url = serviceUrl(values.url, env);
  } catch (e) {
    if (e instanceof ServiceUrlError) throw new UsageError(e.message);
    throw e;
  }
  return { out: values.out, from: values.from, to: values.to, url, key };
}

export interface ExportResult {
  records: number;
  pages: number;
}

/** Pages the export into `out`; `progress` is told the running count and the expected total. */
export async function exportRecords(opts: Options, progress: (done: number, total: number | undefined) => void = () => {}): Promise<ExportResult> {
  const partial = path.join(path.dirname(opts.out), `.${path.basename(opts.out)}.partial`);
  const file = createWriteStream(partial);
  let records = 0;
  let pages = 0;
  let total: number | undefined;
  let cursor: string | null = null;
  try {
    for (;;) {
      const query: URLSearchParams = new URLSearchParams({ ...(opts.from ? { from: opts.from } : {}), ...(opts.to ? { to: opts.to } : {}), ...(cursor ? { cursor } : {}) });
      const url = `${opts.url}/tenant/exports/records?${query}`;
      const res: Response = await fetchService(url, { headers: { accept: 'application/x-ndjson', 'x-service-key': opts.key } });
      if (!res.ok) throw new Error(refusalMessage(url, res.status, await res.text()));
      total ??= numberHeader(res.headers.get('x-total-count'));
      pages++;
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) records++;
          if (!file.write(chunk)) await new Promise<void>((resolve) => file.once('drain', () => resolve()));
          progress(records, total);
        }
      } catch (e) {
        // undici ends a body cut short with TypeError("terminated"), its cause the socket error.
        if (e instanceof TypeError) throw new Error(`lost the connection to ${url.split('?')[0]} during page ${pages}: ${unreachableReason(e)}`);
        throw e;
      }
      // An empty page carries no next cursor: the range is exhausted.
      cursor = res.headers.get('x-next-cursor');
      if (!cursor) break;
    }
    await new Promise<void>((resolve, reject) => file.end((err?: Error | null) => (err ? reject(err) : resolve())));
    renameSync(partial, opts.out);
    return { records, pages };
  } catch (e) {
    file.destroy();
    rmSync(partial, { force: true });
    throw e;
  }
}

function numberHeader(value: string | null): number | undefined {
  return value !== null && /^\d+$/.test(value) ? Number(value) : undefined;
}

export async function main(argv: string[], env = process.env, out = (s: string) => console.log(s), err = (s: string) => console.error(s)): Promise<number> {
  let opts: Options;
  try {
    opts = parseExportArgs(argv, env);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(e.message ? `export: ${e.message}\n\n${USAGE}` : USAGE);
    return 2;
  }
  // cli-progress draws only on a TTY; a pipe or CI log gets the final count alone.
  const bar = new SingleBar({ format: 'records |{bar}| {value}/{total} ({percentage}%)', stream: process.stderr, hideCursor: true });
  let started = false;
  try {
    const result = await exportRecords(opts, (done, total) => {
      const expected = Math.max(total ?? 0, done);
      if (!started) bar.start(expected, done);
      else bar.setTotal(expected);
      started = true;
      bar.update(done);
    });
    if (started) bar.stop();
    out(`exported ${result.records} records in ${result.pages} pages to ${opts.out}`);
    return 0;
  } catch (e) {
    if (started) bar.stop();
    err(`export: ${(e as Error).message}`);
    return 1;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
