/**
 * Official test vectors, kept as data files in test/vectors/ (each folder with its source
 * README and licence), so a fresh clone tests itself with nothing beside it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const VECTORS_DIR = path.join(REPO_ROOT, 'test', 'vectors');

export function vectorPath(...parts: string[]): string {
  return path.join(VECTORS_DIR, ...parts);
}

export function readVector(...parts: string[]): string {
  return readFileSync(vectorPath(...parts), 'utf8');
}

export function readVectorJson<T = unknown>(...parts: string[]): T {
  return JSON.parse(readVector(...parts)) as T;
}
