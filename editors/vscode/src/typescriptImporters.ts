// Which TypeScript and JavaScript files import a given one: the files an edit
// of it may break (a changed signature breaks its callers), which VS Code's
// TypeScript checks only when they are open. No vscode import, so it is unit
// tested; typescriptCheck.ts finds the candidates and opens the importers
// unseen so TypeScript checks them too.
//
// Relative specifiers only ('./calc', '../lib/calc.js', './calc/index'): a
// path alias or a package name (tsconfig `paths`, `baseUrl`, workspaces)
// is not followed, so a caller importing through one is checked only when it
// is open.

import * as path from 'path';

export const SOURCE_EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];
/** The glob of the files looked at. */
export const SOURCE_GLOB = '**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs}';
export const EXCLUDE_GLOB = '**/{node_modules,.git,dist,out,build}/**';

// import … from 'x'; export … from 'x'; import 'x'; import('x'); require('x'); import x = require('x')
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(['"])([^'"\n]+)\1/g;

/** The module specifiers a source text names in its imports, exports and requires. */
export function specifiersOf(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(SPECIFIER)) {
    found.push(match[2]);
  }
  return found;
}

/** The file a relative specifier in `fromFile` may name, as paths without their extension
 * ('../lib/calc.js' and '../lib/calc' both name /w/lib/calc; './calc' may also be /w/calc/index). */
function candidatesOf(fromFile: string, specifier: string): string[] {
  if (!specifier.startsWith('./') && !specifier.startsWith('../') && specifier !== '.' && specifier !== '..') {
    return [];
  }
  const resolved = path.resolve(path.dirname(fromFile), specifier);
  const ext = path.extname(resolved);
  const bare = SOURCE_EXTENSIONS.includes(ext) ? resolved.slice(0, -ext.length) : resolved;
  return [bare, path.join(resolved, 'index')];
}

/** The file without its extension (and `.d` of a declaration file). */
export function stem(file: string): string {
  const ext = path.extname(file);
  const bare = SOURCE_EXTENSIONS.includes(ext) ? file.slice(0, -ext.length) : file;
  return bare.endsWith('.d') ? bare.slice(0, -2) : bare;
}

/** Whether `text`, the source of `fromFile`, imports `target` (absolute paths). */
export function imports(fromFile: string, text: string, target: string): boolean {
  const wanted = stem(target);
  return specifiersOf(text).some((s) => candidatesOf(fromFile, s).includes(wanted));
}

/** A cheap first look before parsing: does the text name the target's file name at all? */
export function mayImport(text: string, target: string): boolean {
  const name = path.basename(stem(target));
  return text.includes(name === 'index' ? path.basename(path.dirname(target)) : name);
}
