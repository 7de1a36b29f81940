/**
 * A build step that removes Preact's raw-HTML path from the extension bundles.
 *
 * The extension renders inside AI sites' pages and shows strings that come from those pages
 * and from the companion; none of them may ever become markup. Our components never use
 * `dangerouslySetInnerHTML`, but Preact's renderer still carries the branch that honours it
 * (two `innerHTML` writes), which Mozilla's addons-linter rightly reports as
 * UNSAFE_VAR_ASSIGNMENT. This transform rewrites that branch in Preact's distributed module:
 * honouring the prop now throws, and the branch's "clear the old HTML" write becomes a
 * `textContent` write, which clears the same children. If a Preact release changes the code so
 * that the rewrite no longer matches exactly, the build fails instead of silently shipping the
 * raw-HTML path again.
 */
import type { Plugin } from 'vite';

const PREACT_DIST = /[\\/]node_modules[\\/]preact[\\/]dist[\\/]preact\.(?:module\.js|mjs)$/;

/** `<el>.innerHTML=<vnode html>.__html` and `<el>.innerHTML=""`, as Preact 10's minified build writes them. */
const SET_HTML = /([\w$]+)\.innerHTML=([\w$]+)\.__html/g;
const CLEAR_HTML = /([\w$]+)\.innerHTML=""/g;

export function withoutRawHtml(code: string): string {
  const sets = code.match(SET_HTML)?.length ?? 0;
  const clears = code.match(CLEAR_HTML)?.length ?? 0;
  if (sets !== 1 || clears !== 1) {
    throw new Error(`no-raw-html: expected one innerHTML set and one innerHTML clear in Preact's build, found ${sets} and ${clears}; update scripts/no-raw-html.ts`);
  }
  return code
    .replace(SET_HTML, () => 'void (()=>{throw new TypeError("dangerouslySetInnerHTML is disabled in the Action Gate extension")})()')
    .replace(CLEAR_HTML, (_, el: string) => `${el}.textContent=""`);
}

export function noRawHtml(): Plugin {
  return {
    name: 'action-gate:no-raw-html',
    enforce: 'pre',
    transform(code, id) {
      return PREACT_DIST.test(id) ? { code: withoutRawHtml(code), map: null } : null;
    },
  };
}
