/**
 * Capability folders of companion/ depend on each other in one direction: no folder imports,
 * directly or through others, a folder that imports it back. Imports are read from the source
 * text (static `import … from`, `export … from` and `import('…')`, type-only ones included:
 * they are dependencies of the design even when erased at run time).
 *
 * One place each: what several capabilities share lives in core/ (secret references), in
 * the capability that owns it (the law ruleset with the packs, idempotency inside the seal
 * pipeline), or is handed in by app.ts (the record view's parts, the integration channels).
 *
 * The top-level files of companion/ are composition roots: they import the capabilities to
 * assemble the service, so no capability (nor core/) imports them back, not even for a type;
 * the types they share live in core/ (core/stores.ts: `Store`, `Tx`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../companion');

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?\sfrom\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Folder → the other folders its files import. */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  const folders = fs.readdirSync(ROOT, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  for (const folder of folders) {
    const deps = new Set<string>();
    graph.set(folder, deps);
    for (const file of fs.readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' })) {
      if (!/\.(?:ts|mts|mjs|js)$/.test(file)) continue;
      const full = path.join(ROOT, folder, file);
      const text = stripComments(fs.readFileSync(full, 'utf8'));
      for (const m of text.matchAll(IMPORT)) {
        const spec = m[1] ?? m[2]!;
        if (!spec.startsWith('.')) continue;
        const rel = path.relative(ROOT, path.resolve(path.dirname(full), spec)).split(path.sep);
        if (rel[0] === '..' || rel.length < 2) continue; // outside companion/, or a top-level file
        if (rel[0] !== folder) deps.add(rel[0]!);
      }
    }
  }
  return graph;
}

function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

/** Tarjan's strongly connected components with more than one folder: the cycles. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) found.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

describe('imports between capability folders of companion/', () => {
  const graph = folderGraph();

  it('form no cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('gate and policy: the gate reads policy, policy never imports the gate', () => {
    expect(graph.get('gate')?.has('policy')).toBe(true);
    expect(graph.get('policy')?.has('gate')).toBe(false);
  });

  it('the check sees a cycle when there is one', () => {
    const graph = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a', 'd'])],
      ['d', new Set<string>()],
    ]);
    expect(cycles(graph)).toEqual([['a', 'b', 'c']]);
  });
});

/**
 * The top-level files of companion/, each a composition root: the service's entry point and
 * the modules that assemble its parts. A new top-level file is added here once it is known to
 * be a root; anything else belongs in a capability folder or core/.
 */
const COMPOSITION_ROOTS = ['app.ts', 'deps.ts', 'main.ts', 'postgres-store.ts', 'seal-participants.ts', 'store.ts', 'workers.ts'];

/**
 * Entry points inside a folder that are composition roots themselves: the sealing thread's
 * main module, which a Worker starts (seal-thread/threaded-sealer.ts) and which opens its own
 * store and builds its seal participants as deps.ts does for the request thread.
 */
const NESTED_ROOTS = ['seal-thread/thread.ts'];

/** `file → root` for every import of a top-level file from a file inside a folder of `root`. */
function rootImports(root: string, nestedRoots: string[] = []): string[] {
  const found: string[] = [];
  for (const folder of fs.readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name)) {
    for (const file of fs.readdirSync(path.join(root, folder), { recursive: true, encoding: 'utf8' })) {
      if (!/\.(?:ts|mts|mjs|js)$/.test(file)) continue;
      const full = path.join(root, folder, file);
      const from = path.relative(root, full).split(path.sep).join('/');
      if (nestedRoots.includes(from)) continue;
      const text = stripComments(fs.readFileSync(full, 'utf8'));
      for (const m of text.matchAll(IMPORT)) {
        const spec = m[1] ?? m[2]!;
        if (!spec.startsWith('.')) continue;
        const rel = path.relative(root, path.resolve(path.dirname(full), spec)).split(path.sep);
        if (rel.length === 1 && rel[0] !== '..') found.push(`${from} → ${rel[0]}`);
      }
    }
  }
  return found.sort();
}

describe('composition roots of companion/', () => {
  it('are the top-level files, and only the known ones', () => {
    const topLevel = fs
      .readdirSync(ROOT, { withFileTypes: true })
      .filter((e) => e.isFile() && /\.(?:ts|mts|mjs|js)$/.test(e.name))
      .map((e) => e.name)
      .sort();
    expect(topLevel).toEqual(COMPOSITION_ROOTS);
    // An exemption names a file that exists, so it cannot outlive the entry point it was for.
    for (const file of NESTED_ROOTS) expect(fs.existsSync(path.join(ROOT, file)), file).toBe(true);
  });

  it('are imported by no capability folder nor core/', () => {
    expect(rootImports(ROOT, NESTED_ROOTS)).toEqual([]);
  });

  it('the check sees a capability importing a root, and not a capability importing its own store', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'roots-'));
    try {
      const write = (file: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), text);
      };
      write('store.ts', 'export interface Tx {}\n');
      write('deps.ts', 'export interface RouteDeps {}\n');
      write('core/stores.ts', 'export interface Tx {}\n');
      write('a/store.ts', 'export interface AStore {}\n');
      write('a/logic.ts', "import type { Tx } from '../store.ts';\nimport type { AStore } from './store.ts';\n");
      write('a/routes.ts', "import type { RouteDeps } from '../deps.ts';\n");
      write('a/nested/own.ts', "import type { AStore } from '../store.ts';\nconst load = () => import('../../store.ts');\n");
      write('a/clean.ts', "// import type { Tx } from '../store.ts';\nimport type { Tx } from '../core/stores.ts';\n");
      write('core/jobs/worker.ts', "import type { Tx } from '../../store.ts';\n");
      write('a/main.ts', "import { open } from '../store.ts';\n");
      expect(rootImports(dir, ['a/main.ts'])).toEqual(['a/logic.ts → store.ts', 'a/nested/own.ts → store.ts', 'a/routes.ts → deps.ts', 'core/jobs/worker.ts → store.ts']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
