/** Loads a fixture page's markup (without its scripts) into the current happy-dom document. */
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/vectors.ts';

export function loadFixtureMarkup(site: string): void {
  const html = fs.readFileSync(path.join(REPO_ROOT, 'test', 'extension', 'fixtures', `${site}.html`), 'utf8');
  const body = /<body>([\s\S]*)<\/body>/.exec(html)![1]!.replace(/<script[\s\S]*?<\/script>/g, '');
  document.body.innerHTML = body;
}
