import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnosticsOf, tsDiagnostic } from '../src/typescriptShapes';

test("a TypeScript server diagnostic is an LSP Diagnostic: 0-based positions, VS Code's source and severities", () => {
  const error = { start: { line: 3, offset: 14 }, end: { line: 3, offset: 19 }, text: "Type 'string' is not assignable to type 'number'.", code: 2322, category: 'error' };
  assert.deepEqual(tsDiagnostic(error, true), {
    range: { start: { line: 2, character: 13 }, end: { line: 2, character: 18 } },
    severity: 1,
    message: "Type 'string' is not assignable to type 'number'.",
    source: 'ts',
    code: 2322,
  });
  // an unused variable under noUnusedLocals: an error to tsc, a warning in VS Code unless reportStyleChecksAsWarnings is off
  const unused = { ...error, text: "'x' is declared but its value is never read.", code: 6133 };
  assert.equal(tsDiagnostic(unused, true).severity, 2);
  assert.equal(tsDiagnostic(unused, false).severity, 1);
  assert.equal(tsDiagnostic({ ...error, category: 'suggestion' }, true).severity, 4);
  assert.equal(tsDiagnostic({ ...error, category: 'warning' }, true).severity, 2);
  assert.equal(tsDiagnostic({ ...error, source: 'ts-plugin' }, true).source, 'ts-plugin');
});

test('only a successful response holds diagnostics: a server still starting or a cancelled request does not', () => {
  assert.deepEqual(diagnosticsOf({ type: 'response', success: true, body: [] }), []);
  assert.equal(diagnosticsOf({ type: 'noServer' }), undefined);
  assert.equal(diagnosticsOf({ type: 'cancelled' }), undefined);
  assert.equal(diagnosticsOf({ type: 'response', success: false }), undefined);
  assert.equal(diagnosticsOf(undefined), undefined);
});
