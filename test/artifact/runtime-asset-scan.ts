/**
 * What the sources load at run time besides their imports, found in their syntax trees: every
 * `import.meta` of the files the build ships, sorted into
 *   - `new URL('<relative path>', import.meta.url)`: a file or folder beside the module (every
 *     string literal of the first argument, both branches of a conditional included);
 *   - `createRequire(import.meta.url)`: a package from node_modules, which ships as it is;
 *   - anything else (fileURLToPath(import.meta.url), import.meta.dirname, …): a use the scan
 *     cannot follow, which scripts/runtime-assets.mjs must declare by file.
 * And the check of a build folder against the declared assets.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { BUILT_ASSETS, COPIED_ASSETS, SOURCE_ONLY, assetFiles } from '../../scripts/runtime-assets.mjs';

export interface UrlReference {
  /** The source file, relative to the checkout. */
  file: string;
  line: number;
  /** The path it reaches, relative to the checkout, without a trailing slash. */
  target: string;
}

export interface ScanResult {
  references: UrlReference[];
  /** Source files with a use of import.meta the scan cannot follow. */
  otherUses: Map<string, number[]>;
}

const SCANNED_DIRS = ['companion', 'shared'];

/** The files the build ships as code: what tsc compiles, and copied plain-JavaScript entries. */
export function shippedSources(root: string): string[] {
  const sourceOnly = new Set(SOURCE_ONLY.map((s) => s.path));
  const copiedScripts = COPIED_ASSETS.flatMap((a) => assetFiles(root, a.path)).filter((f) => /\.(mjs|cjs|js)$/.test(f));
  const compiled = SCANNED_DIRS.flatMap((dir) =>
    fs
      .readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && /\.(ts|mts|tsx)$/.test(e.name) && !e.name.endsWith('.d.ts'))
      .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/')),
  );
  return [...compiled, ...copiedScripts].filter((f) => !f.split('/').includes('node_modules') && !sourceOnly.has(f)).sort();
}

function literals(node: ts.Node): string[] {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return [node.text];
  if (ts.isConditionalExpression(node)) return [...literals(node.whenTrue), ...literals(node.whenFalse)];
  if (ts.isParenthesizedExpression(node)) return literals(node.expression);
  return [];
}

export function scanSources(root: string, files: string[] = shippedSources(root)): ScanResult {
  const references: UrlReference[] = [];
  const otherUses = new Map<string, number[]>();
  for (const file of files) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    if (!text.includes('import.meta')) continue;
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isMetaProperty(node) && node.keywordToken === ts.SyntaxKind.ImportKeyword) {
        const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
        const access = node.parent;
        const isUrl = ts.isPropertyAccessExpression(access) && access.name.text === 'url';
        const user = isUrl ? access.parent : undefined;
        const other = () => otherUses.set(file, [...(otherUses.get(file) ?? []), line]);
        if (user && ts.isNewExpression(user) && user.expression.getText(sf) === 'URL' && user.arguments?.[1] === access) {
          const found = literals(user.arguments[0]!);
          if (found.length === 0) other();
          for (const rel of found) {
            const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), rel)).replace(/\/$/, '');
            references.push({ file, line, target });
          }
        } else if (user && ts.isCallExpression(user) && user.expression.getText(sf) === 'createRequire') {
          // A package, resolved from node_modules at run time: it ships as installed.
        } else {
          other();
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return { references, otherUses };
}

/** The declared asset that holds `target`, if any. */
export function declaredAssetFor(target: string): { path: string } | undefined {
  return [...COPIED_ASSETS, ...BUILT_ASSETS].find((a) => target === a.path || target.startsWith(`${a.path}/`));
}

/**
 * What is wrong with the build at `dist` (relative to the checkout at `root`): a file of a
 * copied asset missing or different, a built asset missing, a module a reference names
 * (compiled .js) missing. Empty when the build is whole.
 */
export function checkBuild(root: string, dist: string, references: UrlReference[]): string[] {
  const problems: string[] = [];
  for (const asset of COPIED_ASSETS) {
    for (const file of assetFiles(root, asset.path)) {
      const built = path.join(dist, file);
      if (!fs.existsSync(built)) problems.push(`dist/${file} is missing (read by ${asset.readBy})`);
      else if (!fs.readFileSync(built).equals(fs.readFileSync(path.join(root, file)))) problems.push(`dist/${file} differs from ${file}`);
    }
  }
  for (const asset of BUILT_ASSETS) {
    if (!fs.existsSync(path.join(dist, asset.path))) problems.push(`dist/${asset.path} is missing (read by ${asset.readBy})`);
  }
  for (const ref of references) {
    if (SOURCE_ONLY.some((s) => s.path === ref.target)) continue;
    if (!fs.existsSync(path.join(dist, ref.target))) problems.push(`dist/${ref.target} is missing (${ref.file}:${ref.line})`);
  }
  return [...new Set(problems)];
}

/**
 * References the build would not satisfy: neither a module tsc emits (a .js beside its .ts), nor
 * inside a declared asset, nor declared as loaded from source only (by the file that loads it).
 */
export function undeclaredReferences(root: string, references: UrlReference[]): UrlReference[] {
  return references.filter((ref) => {
    const sourceOnly = SOURCE_ONLY.find((s) => s.path === ref.target);
    if (sourceOnly) return sourceOnly.readBy !== ref.file;
    if (ref.target.endsWith('.js') && fs.existsSync(path.join(root, ref.target.replace(/\.js$/, '.ts')))) return false;
    return declaredAssetFor(ref.target) === undefined;
  });
}
