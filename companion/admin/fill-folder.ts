/**
 * Fills an absent or empty folder as one step an admin can trust: the content is made in a
 * hidden staging folder inside the target (so the final moves are renames on one file system,
 * even when the target is a mount point such as a container volume) and moved up only when
 * `fill` says to commit. Otherwise, or on an error, the staging folder is removed, and so is
 * the target if this call created it: nothing is left behind.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface Filled<T> {
  commit: boolean;
  value: T;
}

/**
 * `lastNames`: entries moved after all the others, in this order: the one whose presence
 * says the folder is whole (MANIFEST.json of a backup, the database of a data directory).
 */
export async function fillEmptyFolder<T>(target: string, lastNames: readonly string[], fill: (staging: string) => Promise<Filled<T>>): Promise<T> {
  const created = fs.mkdirSync(target, { recursive: true, mode: 0o700 });
  // Private whatever made it: it may hold API-key hashes, records, perhaps the signing key.
  fs.chmodSync(target, 0o700);
  const staging = path.join(target, `.partial-${process.pid}`);
  const discard = () => {
    fs.rmSync(staging, { recursive: true, force: true });
    if (created !== undefined) fs.rmSync(created, { recursive: true, force: true });
  };
  try {
    fs.mkdirSync(staging, { mode: 0o700 });
    const { commit, value } = await fill(staging);
    if (!commit) {
      discard();
      return value;
    }
    const names = fs.readdirSync(staging);
    const ordered = [...names.filter((n) => !lastNames.includes(n)), ...lastNames.filter((n) => names.includes(n))];
    for (const name of ordered) fs.renameSync(path.join(staging, name), path.join(target, name));
    fs.rmdirSync(staging);
    fsyncPath(target);
    return value;
  } catch (err) {
    discard();
    throw err;
  }
}

export function isAbsentOrEmptyDir(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory() && fs.readdirSync(dir).length === 0;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
  }
}

/** fsync of a file, or of a folder (its entries: the renames above). */
export function fsyncPath(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
