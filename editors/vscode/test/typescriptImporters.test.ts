import { test } from 'node:test';
import assert from 'node:assert/strict';
import { imports, mayImport, specifiersOf, stem } from '../src/typescriptImporters';

const CALC = '/w/src/lib/calc.ts';

test('the module specifiers of imports, re-exports, side-effect imports, dynamic imports and requires', () => {
  const text = [
    "import { add } from './lib/calc';",
    "import type { Total } from \"../types\";",
    "export * from './lib/calc.js';",
    "import './polyfill';",
    "const lazy = await import('./lazy');",
    "const fs = require('fs');",
    "import legacy = require('./legacy');",
    "// a comment that says from nowhere",
  ].join('\n');
  assert.deepEqual(specifiersOf(text), ['./lib/calc', '../types', './lib/calc.js', './polyfill', './lazy', 'fs', './legacy']);
});

test('a file imports the edited one by a relative path, with or without an extension, or through its folder index', () => {
  assert.ok(imports('/w/src/main.ts', "import { add } from './lib/calc';\nadd(1, 2);\n", CALC));
  assert.ok(imports('/w/src/lib/sub/use.ts', "import { add } from '../calc.js';\n", CALC));
  assert.ok(imports('/w/test/calc.test.ts', "const { add } = require('../src/lib/calc')\n", CALC));
  assert.ok(imports('/w/src/app.ts', "export { add } from './lib';\n", '/w/src/lib/index.ts'));
  assert.ok(imports('/w/src/app.ts', "import { add } from './lib/calc';\n", '/w/src/lib/calc.d.ts'));
});

test('a file that names another module of the same name, a package or only mentions it is no importer', () => {
  assert.ok(!imports('/w/src/main.ts', "import { add } from './calc';\n", CALC)); // /w/src/calc, not /w/src/lib/calc
  assert.ok(!imports('/w/src/main.ts', "import { add } from 'calc';\n", CALC)); // a package (or a path alias): not followed
  assert.ok(!imports('/w/src/main.ts', "const name = 'lib/calc';\n", CALC));
  assert.ok(!imports('/w/src/main.ts', "import { add } from './lib/calculator';\n", CALC));
});

test('the quick look before parsing keeps every file that may import it', () => {
  assert.ok(mayImport("import { add } from './lib/calc.js'", CALC));
  assert.ok(!mayImport("import { sum } from './lib/sum'", CALC));
  assert.ok(mayImport("import { add } from './lib'", '/w/src/lib/index.ts'));
  assert.equal(stem('/w/a/b.d.ts'), '/w/a/b');
  assert.equal(stem('/w/a/b.tsx'), '/w/a/b');
});
