/**
 * Two stock archive formats for bundle packages, written in full (no streaming needed: a
 * package is bounded by the batch limit): POSIX ustar (POSIX.1-1988, `tar -xf`) and ZIP with
 * stored entries (APPNOTE.TXT 6.3.10 §4.3, `unzip`). Entries are regular files with fixed
 * mode 0644 and a fixed mtime, so the same package always yields the same bytes.
 */
import { crc32 } from 'node:zlib';

export interface ArchiveEntry {
  /** Relative path with '/' separators; no '..', no leading '/'. */
  path: string;
  data: Uint8Array;
}

const enc = new TextEncoder();

function assertPath(path: string): void {
  if (path === '' || path.startsWith('/') || path.split('/').some((s) => s === '' || s === '.' || s === '..')) {
    throw new RangeError(`expected a relative archive path, got ${JSON.stringify(path)}`);
  }
}

/** POSIX ustar: a 512-byte header per file, data padded to 512, two zero blocks at the end. */
export function tarArchive(entries: readonly ArchiveEntry[], mtimeSeconds: number): Uint8Array {
  const blocks: Uint8Array[] = [];
  for (const e of entries) {
    assertPath(e.path);
    const header = new Uint8Array(512);
    const bytes = enc.encode(e.path);
    // ustar splits long names at a '/' into prefix (155) and name (100).
    let name = bytes;
    let prefix = new Uint8Array(0);
    if (bytes.length > 100) {
      const cut = e.path.lastIndexOf('/', 155);
      if (cut < 0 || bytes.length - cut - 1 > 100) throw new RangeError(`path too long for ustar: ${e.path}`);
      prefix = enc.encode(e.path.slice(0, cut));
      name = enc.encode(e.path.slice(cut + 1));
    }
    const field = (offset: number, value: string) => header.set(enc.encode(value), offset);
    header.set(name, 0);
    field(100, '0000644\0');
    field(108, '0000000\0');
    field(116, '0000000\0');
    field(124, `${e.data.length.toString(8).padStart(11, '0')}\0`);
    field(136, `${mtimeSeconds.toString(8).padStart(11, '0')}\0`);
    field(148, '        '); // checksum is computed with its own field as spaces
    field(156, '0');
    field(257, 'ustar\0');
    field(263, '00');
    header.set(prefix, 345);
    const sum = header.reduce((a, b) => a + b, 0);
    field(148, `${sum.toString(8).padStart(6, '0')}\0 `);
    blocks.push(header, e.data, new Uint8Array((512 - (e.data.length % 512)) % 512));
  }
  blocks.push(new Uint8Array(1024));
  return concat(blocks);
}

/** ZIP with every entry stored (method 0), UTF-8 names (flag bit 11), one central directory. */
export function zipArchive(entries: readonly ArchiveEntry[], mtime: Date): Uint8Array {
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  // MS-DOS date and time (APPNOTE 4.4.6), UTC fields.
  const dosTime = (mtime.getUTCHours() << 11) | (mtime.getUTCMinutes() << 5) | (mtime.getUTCSeconds() >> 1);
  const dosDate = ((mtime.getUTCFullYear() - 1980) << 9) | ((mtime.getUTCMonth() + 1) << 5) | mtime.getUTCDate();
  for (const e of entries) {
    assertPath(e.path);
    const name = enc.encode(e.path);
    const crc = crc32(e.data);
    const local = new DataView(new ArrayBuffer(30));
    local.setUint32(0, 0x04034b50, true);
    local.setUint16(4, 20, true);
    local.setUint16(6, 0x0800, true);
    local.setUint16(8, 0, true);
    local.setUint16(10, dosTime, true);
    local.setUint16(12, dosDate, true);
    local.setUint32(14, crc, true);
    local.setUint32(18, e.data.length, true);
    local.setUint32(22, e.data.length, true);
    local.setUint16(26, name.length, true);
    local.setUint16(28, 0, true);
    const dir = new DataView(new ArrayBuffer(46));
    dir.setUint32(0, 0x02014b50, true);
    dir.setUint16(4, (3 << 8) | 20, true); // made by Unix, so the external attributes carry the mode
    dir.setUint16(6, 20, true);
    dir.setUint16(8, 0x0800, true);
    dir.setUint16(10, 0, true);
    dir.setUint16(12, dosTime, true);
    dir.setUint16(14, dosDate, true);
    dir.setUint32(16, crc, true);
    dir.setUint32(20, e.data.length, true);
    dir.setUint32(24, e.data.length, true);
    dir.setUint16(28, name.length, true);
    dir.setUint32(38, (0o100644 << 16) >>> 0, true);
    dir.setUint32(42, offset, true);
    parts.push(new Uint8Array(local.buffer), name, e.data);
    central.push(new Uint8Array(dir.buffer), name);
    offset += 30 + name.length + e.data.length;
  }
  const dirBytes = concat(central);
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, entries.length, true);
  end.setUint16(10, entries.length, true);
  end.setUint32(12, dirBytes.length, true);
  end.setUint32(16, offset, true);
  return concat([...parts, dirBytes, new Uint8Array(end.buffer)]);
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
