/**
 * Unpacks a ZIP archive (the store packages `wxt zip` writes) into a folder, as a user's browser
 * or a store does with the same file: every entry's CRC-32 is checked, and no entry may point
 * outside the folder. Stored (0) and deflated (8) entries only, which is all `wxt zip` writes
 * (APPNOTE.TXT 6.3, §4.3.7 local header, §4.3.12 central directory, §4.3.16 end record).
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_HEADER = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;

/** Extracts `zipFile` into `dir` (created if needed); returns the entries' paths, `/`-separated. */
export function unzip(zipFile: string, dir: string): string[] {
  const zip = fs.readFileSync(zipFile);
  // The end record sits in the last 22 bytes plus at most a 64 KiB comment.
  let end = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === END_OF_CENTRAL_DIRECTORY) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new Error(`${zipFile}: no end of central directory record`);
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const root = path.resolve(dir);
  const names: string[] = [];
  for (let n = 0; n < count; n++) {
    if (zip.readUInt32LE(at) !== CENTRAL_HEADER) throw new Error(`${zipFile}: bad central directory entry ${n}`);
    const method = zip.readUInt16LE(at + 10);
    const crc = zip.readUInt32LE(at + 16);
    const compressedSize = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const localOffset = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;

    const target = path.resolve(root, name);
    if (target !== root && !target.startsWith(root + path.sep)) throw new Error(`${zipFile}: entry ${JSON.stringify(name)} points outside the folder`);
    if (name.endsWith('/')) {
      fs.mkdirSync(target, { recursive: true });
      continue;
    }
    if (zip.readUInt32LE(localOffset) !== LOCAL_HEADER) throw new Error(`${zipFile}: bad local header for ${name}`);
    const dataStart = localOffset + 30 + zip.readUInt16LE(localOffset + 26) + zip.readUInt16LE(localOffset + 28);
    const raw = zip.subarray(dataStart, dataStart + compressedSize);
    let data: Buffer;
    if (method === 0) data = Buffer.from(raw);
    else if (method === 8) data = zlib.inflateRawSync(raw);
    else throw new Error(`${zipFile}: ${name} uses compression method ${method}`);
    if (data.length !== size || zlib.crc32(data) !== crc) throw new Error(`${zipFile}: ${name} is damaged (size or CRC-32 mismatch)`);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, data);
    names.push(name);
  }
  return names;
}
