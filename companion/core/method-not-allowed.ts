/**
 * 405 Method Not Allowed with an Allow header (RFC 9110 §15.5.6). Hono answers an unmatched
 * method like an unknown path (404); this derives, from the app's registered routes, which
 * methods the path does accept, matching paths with Hono's own router so the answer agrees
 * with routing exactly.
 */
import type { RouterRoute } from 'hono/types';
import { TrieRouter } from 'hono/router/trie-router';

/** Hono's marker for middleware registered with `use` (matches every method). */
const ALL = 'ALL';

export interface AllowedMethods {
  /** Methods the path accepts, sorted; empty when no route has this path at all. */
  (path: string): string[];
}

/** Built lazily on first use: routes are final once the app serves requests. */
export function allowedMethodsFor(routes: () => readonly RouterRoute[]): AllowedMethods {
  let index: { router: TrieRouter<string>; methods: string[] } | undefined;
  return (path) => {
    index ??= build(routes());
    const allowed = new Set<string>();
    for (const method of index.methods) {
      const [matches] = index.router.match(method, path);
      if (matches.some(([m]) => m === method)) allowed.add(method);
    }
    // RFC 9110 §9.3.2: a GET resource also answers HEAD (Hono serves HEAD with the GET route).
    if (allowed.has('GET')) allowed.add('HEAD');
    return [...allowed].sort();
  };
}

function build(routes: readonly RouterRoute[]) {
  const router = new TrieRouter<string>();
  const methods = new Set<string>();
  for (const r of routes) {
    if (r.method === ALL) continue;
    router.add(r.method, r.path, r.method);
    methods.add(r.method);
  }
  return { router, methods: [...methods] };
}
