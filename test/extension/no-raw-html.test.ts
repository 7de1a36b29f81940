/** The build step that removes Preact's raw-HTML branch (scripts/no-raw-html.ts). */
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { withoutRawHtml } from '../../scripts/no-raw-html.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';

const preact = (file: string) => fs.readFileSync(path.join(REPO_ROOT, 'node_modules', 'preact', 'dist', file), 'utf8');

it.each(['preact.mjs', 'preact.module.js'])('rewrites both innerHTML writes of the installed Preact (%s)', (file) => {
  const code = withoutRawHtml(preact(file));
  expect(code).not.toMatch(/\.innerHTML\s*=[^=]/);
  expect(code).toContain('dangerouslySetInnerHTML is disabled');
  expect(code).toMatch(/\.textContent=""/);
});

it('fails the build when Preact no longer matches, instead of shipping the raw-HTML path', () => {
  expect(() => withoutRawHtml('el.innerHTML=v.__html;')).toThrow(/found 1 and 0/);
  expect(() => withoutRawHtml('a.innerHTML=b.__html;a.innerHTML="";c.innerHTML=d.__html')).toThrow(/found 2 and 1/);
});
