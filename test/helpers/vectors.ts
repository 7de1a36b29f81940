/**
 * Official test vectors live in the team's reference folder beside the project
 * (../shared/vectors); tests read them in place and never copy them in.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const VECTORS_DIR = path.resolve(REPO_ROOT, '../shared/vectors');

export function vectorPath(...parts: string[]): string {
  return path.join(VECTORS_DIR, ...parts);
}

export function readVector(...parts: string[]): string {
  return readFileSync(vectorPath(...parts), 'utf8');
}

export function readVectorJson<T = unknown>(...parts: string[]): T {
  return JSON.parse(readVector(...parts)) as T;
}
