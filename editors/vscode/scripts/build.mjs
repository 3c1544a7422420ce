// Bundles the extension (Node, CommonJS; `vscode` stays external) and the
// panel script (browser IIFE) with esbuild.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

const production = process.argv.includes('--production');
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning', target: 'es2022' };

rmSync('dist', { recursive: true, force: true });
await Promise.all([
  build({
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    external: ['vscode'],
  }),
  build({
    ...common,
    entryPoints: ['src/webview/main.ts'],
    outfile: 'dist/webview.js',
    platform: 'browser',
    format: 'iife',
  }),
]);
