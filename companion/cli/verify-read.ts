/**
 * How the offline verifier reads what it is handed: every file and every download capped at
 * `--max-bytes` (else SVC_VERIFY_MAX_BYTES, else 64 MiB). The input is untrusted by design, so
 * a symbolic link (to /dev/zero, or to a file the person running the verifier can read but did
 * not mean to hand over) and anything that is not a regular file (a FIFO, a device) are
 * refused; the file is opened with O_NOFOLLOW and checked again on the open descriptor, so it
 * cannot be swapped for a link between the check and the read. A download is read chunk by
 * chunk and cut off the moment it passes the cap.
 */
import fs from 'node:fs';

export const MAX_BYTES_ENV = 'SVC_VERIFY_MAX_BYTES';
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

/** A file or download the verifier will not read: one line, exit 2 (an input error). */
export class ReadRefused extends Error {}

/** The cap from --max-bytes, else SVC_VERIFY_MAX_BYTES, else the default; a bad value is a usage mistake. */
export function maxBytesSetting(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): number | { problem: string } {
  const raw = flag ?? env[MAX_BYTES_ENV];
  if (raw === undefined || raw === '') return DEFAULT_MAX_BYTES;
  const from = flag !== undefined ? '--max-bytes' : MAX_BYTES_ENV;
  if (!/^[1-9][0-9]{0,15}$/.test(raw) || !Number.isSafeInteger(Number(raw))) return { problem: `${from} must be a positive whole number of bytes` };
  return Number(raw);
}

function mib(n: number): string {
  return n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(n % (1024 * 1024) === 0 ? 0 : 1)} MiB` : `${n} bytes`;
}

/** Opens `file` for reading only if it is a regular file and not a link; the descriptor is the caller's to close. */
export function openRegular(file: string): { fd: number; size: number } {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new ReadRefused(`no such file ${file}`);
    throw new ReadRefused(`${file}: cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (st.isSymbolicLink()) throw new ReadRefused(`${file} is a symbolic link; the verifier reads only regular files`);
  if (!st.isFile()) throw new ReadRefused(`${file} is not a regular file`);
  let fd: number;
  try {
    // O_NONBLOCK: should the name now be a FIFO, the open does not wait for a writer.
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new ReadRefused(`${file} is a symbolic link; the verifier reads only regular files`);
    throw new ReadRefused(`${file}: cannot be read (${code ?? 'error'})`);
  }
  const opened = fs.fstatSync(fd);
  if (!opened.isFile()) {
    fs.closeSync(fd);
    throw new ReadRefused(`${file} is not a regular file`);
  }
  return { fd, size: opened.size };
}

/** The whole file, if it is a regular file of at most `maxBytes`. */
export function readCapped(file: string, maxBytes: number): Buffer {
  const { fd, size } = openRegular(file);
  try {
    if (size > maxBytes) throw new ReadRefused(`${file} is larger than the ${mib(maxBytes)} the verifier reads (--max-bytes, ${MAX_BYTES_ENV})`);
    // Read at most one byte past the cap: a file that grows while it is read is refused too.
    const buf = Buffer.allocUnsafe(Math.min(size, maxBytes) + 1);
    let at = 0;
    for (;;) {
      const n = fs.readSync(fd, buf, at, buf.length - at, null);
      if (n === 0) break;
      at += n;
      if (at > maxBytes) throw new ReadRefused(`${file} is larger than the ${mib(maxBytes)} the verifier reads (--max-bytes, ${MAX_BYTES_ENV})`);
      if (at === buf.length) break;
    }
    return buf.subarray(0, at);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A file's lines, each at most `maxBytes` (a records export may be any length; one record may
 * not be unbounded). The file must be a regular file, not a link.
 */
export async function* cappedLines(file: string, maxBytes: number): AsyncGenerator<string> {
  const { fd } = openRegular(file);
  const stream = fs.createReadStream('', { fd, highWaterMark: 64 * 1024 });
  const decoder = new TextDecoder();
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let start = 0;
      for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
        const piece = chunk.subarray(start, nl);
        if (pendingBytes + piece.length > maxBytes) throw new ReadRefused(`${file}: a line is longer than the ${mib(maxBytes)} the verifier reads (--max-bytes, ${MAX_BYTES_ENV})`);
        const line = pending.length === 0 ? piece : Buffer.concat([...pending, piece]);
        pending = [];
        pendingBytes = 0;
        yield decoder.decode(line).replace(/\r$/, '');
        start = nl + 1;
      }
      const rest = chunk.subarray(start);
      pendingBytes += rest.length;
      if (pendingBytes > maxBytes) throw new ReadRefused(`${file}: a line is longer than the ${mib(maxBytes)} the verifier reads (--max-bytes, ${MAX_BYTES_ENV})`);
      if (rest.length > 0) pending.push(Buffer.from(rest));
    }
    if (pendingBytes > 0) yield decoder.decode(Buffer.concat(pending)).replace(/\r$/, '');
  } finally {
    stream.destroy();
  }
}

/**
 * An answer's body, read chunk by chunk and cut off (the connection cancelled) once it passes
 * `maxBytes`, so a huge or endless answer costs at most the cap. With `toFile`, the chunks go
 * to that file (created 0600, never through an existing link) as they arrive, not to memory.
 */
export async function readBodyCapped(res: Response, url: string, maxBytes: number, toFile?: string): Promise<Buffer | undefined> {
  const declared = Number(res.headers.get('content-length'));
  const tooLarge = () => new ReadRefused(`the answer from ${url} is larger than the ${mib(maxBytes)} the verifier reads (--max-bytes, ${MAX_BYTES_ENV}); the rest was not read`);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const fd = toFile === undefined ? undefined : fs.openSync(toFile, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, 0o600);
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = res.body?.getReader();
  try {
    if (reader) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.length;
        if (size > maxBytes) {
          await reader.cancel().catch(() => undefined);
          throw tooLarge();
        }
        if (fd !== undefined) fs.writeSync(fd, value);
        else chunks.push(Buffer.from(value.buffer, value.byteOffset, value.length));
      }
    }
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  return fd === undefined ? Buffer.concat(chunks, size) : undefined;
}
