// Fixes in installed dependencies that their released versions lack, applied after every install
// (the `postinstall` script; the Dockerfile runs it after `npm ci --ignore-scripts`). Each fix
// names the exact version it is for and the text it replaces: when an upgrade changes either, the
// install fails here, so the fix is looked at again rather than silently dropped. Running it
// twice changes nothing.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const FIXES = [
  {
    // postgres 3.4.9 defers small writes to a setImmediate. When the connection closes first (the
    // server ended the session: a restart, a failover, pg_terminate_backend), the deferred write
    // finds no socket and throws outside any promise, which ends the whole process; and the
    // teardown cancels the timer without clearing it, so the connection object, reused when it
    // reconnects, would never flush a small write again. Reported upstream:
    // https://github.com/porsager/postgres/issues/1154 and /issues/1208.
    package: 'postgres',
    version: '3.4.9',
    file: 'src/connection.js',
    edits: [
      {
        // The deferred write after the close rejects its query with CONNECTION_CLOSED instead.
        find: '  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)',
        replace:
          '  function nextWrite(fn) {\n' +
          '    if (!socket) {\n' +
          '      chunk = nextWriteTimer = null\n' +
          "      error(Errors.connection('CONNECTION_CLOSED', options))\n" +
          '      return false\n' +
          '    }\n' +
          '    const x = socket.write(chunk, fn)',
      },
      {
        // terminate(): nothing buffered for a socket that is ending may be sent later.
        find: '    clearImmediate(nextWriteTimer)\n    if (socket) {',
        replace: '    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n    if (socket) {',
      },
      {
        // closed(): the same, before the object reconnects with a new socket.
        find: '    remaining = 0\n    incomings = null\n    clearImmediate(nextWriteTimer)\n',
        replace: '    remaining = 0\n    incomings = null\n    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n',
      },
    ],
  },
];

/**
 * Applies every fix under `nodeModules`; returns the files it changed (none when all were
 * applied already). Throws when a package's version or text is not the one a fix is for.
 */
export function applyFixes(nodeModules) {
  const changed = [];
  for (const fix of FIXES) {
    const dir = path.join(nodeModules, fix.package);
    const { version } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    if (version !== fix.version) {
      throw new Error(`${fix.package} is ${version}, but scripts/patch-dependencies.mjs has a fix for ${fix.version}: check whether ${version} still needs it, then update or remove it`);
    }
    const file = path.join(dir, fix.file);
    const before = fs.readFileSync(file, 'utf8');
    let text = before;
    for (const edit of fix.edits) {
      if (text.includes(edit.replace)) continue;
      const at = text.indexOf(edit.find);
      if (at < 0 || text.indexOf(edit.find, at + 1) >= 0) {
        throw new Error(`${fix.package}@${version} ${fix.file}: the text to fix is not found exactly once:\n${edit.find}`);
      }
      text = text.replace(edit.find, edit.replace);
    }
    if (text !== before) {
      fs.writeFileSync(file, text);
      changed.push(file);
    }
  }
  return changed;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) applyFixes(fileURLToPath(new URL('../node_modules/', import.meta.url)));
