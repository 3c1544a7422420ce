import { test } from 'node:test';
import assert from 'node:assert/strict';
import { codeActions, diagnostic, hoverText, location, symbol, workspaceEdit } from '../src/languageShapes';

// Stand-ins with the shapes VS Code's objects have (a Uri's toString() is its URI).
const uri = (s: string) => ({ toString: () => s });
const at = (line: number, character: number, endLine = line, endCharacter = character) => ({
  start: { line, character },
  end: { line: endLine, character: endCharacter },
});
const A = 'file:///w/a.ts';
const B = 'file:///w/b.ts';

test('a VS Code diagnostic is an LSP Diagnostic: severity 1 (error) to 4 (hint), the code without its link', () => {
  assert.deepEqual(diagnostic({ range: at(2, 4, 2, 9), severity: 0, message: "Cannot find name 'x'.", source: 'ts', code: 2304 }), {
    range: at(2, 4, 2, 9),
    severity: 1,
    message: "Cannot find name 'x'.",
    source: 'ts',
    code: 2304,
  });
  assert.deepEqual(diagnostic({ range: at(0, 0), severity: 3, message: 'unused', code: { value: 'no-unused', target: uri('https://lint/rule') } }), {
    range: at(0, 0),
    severity: 4,
    message: 'unused',
    code: 'no-unused',
  });
  assert.equal(diagnostic({ range: at(0, 0), severity: 1, message: 'w' }).severity, 2);
});

test('locations and location links keep their URIs and ranges', () => {
  assert.deepEqual(location({ uri: uri(A), range: at(1, 16, 1, 21) }), { uri: A, range: at(1, 16, 1, 21) });
  assert.deepEqual(location({ targetUri: uri(B), targetRange: at(0, 0, 2, 1), targetSelectionRange: at(0, 16, 0, 21), originSelectionRange: at(3, 2, 3, 7) }), {
    targetUri: B,
    targetRange: at(0, 0, 2, 1),
    targetSelectionRange: at(0, 16, 0, 21),
    originSelectionRange: at(3, 2, 3, 7),
  });
  assert.deepEqual((location({ targetUri: uri(B), targetRange: at(0, 0, 2, 1) }) as any).targetSelectionRange, at(0, 0, 2, 1));
});

test("document symbols keep their tree; symbol kinds are LSP's (VS Code's plus one)", () => {
  // VS Code's executeDocumentSymbolProvider answers objects that are both kinds of symbol
  const method = { name: 'greet', kind: 5, detail: '', range: at(1, 2, 3, 3), selectionRange: at(1, 2, 1, 7), children: [], location: { uri: uri(A), range: at(1, 2, 3, 3) } };
  const cls = { name: 'Greeter', kind: 4, detail: '', range: at(0, 0, 4, 1), selectionRange: at(0, 6, 0, 13), children: [method], location: { uri: uri(A), range: at(0, 0, 4, 1) } };
  assert.deepEqual(symbol(cls), {
    name: 'Greeter',
    detail: '',
    kind: 5, // Class
    range: at(0, 0, 4, 1),
    selectionRange: at(0, 6, 0, 13),
    children: [{ name: 'greet', detail: '', kind: 6, range: at(1, 2, 3, 3), selectionRange: at(1, 2, 1, 7), children: [] }],
  });
  assert.deepEqual(symbol({ name: 'greet', kind: 11, containerName: 'a', location: { uri: uri(A), range: at(0, 16, 0, 21) } }), {
    name: 'greet',
    kind: 12, // Function
    containerName: 'a',
    location: { uri: A, range: at(0, 16, 0, 21) },
  });
});

test('hover text joins the parts; a code block keeps its language', () => {
  assert.equal(
    hoverText([{ contents: [{ value: '```typescript\nfunction greet(name: string): string\n```' }, ''] }, { contents: ['plain', { language: 'ts', value: 'let x: number' }] }]),
    '```typescript\nfunction greet(name: string): string\n```\n\nplain\n\n```ts\nlet x: number\n```',
  );
  assert.equal(hoverText([]), '');
});

test('a rename is one WorkspaceEdit with a versioned edit per file (null: not open)', () => {
  const versions: Record<string, number> = { [A]: 3 };
  const edit = workspaceEdit(
    [
      [uri(A), [{ range: at(0, 16, 0, 21), newText: 'welcome' }]],
      [uri(B), [{ range: at(0, 9, 0, 14), newText: 'welcome' }, { range: at(1, 0, 1, 5), newText: 'welcome' }]],
    ],
    (u) => versions[u] ?? null,
  );
  assert.deepEqual(edit, {
    documentChanges: [
      { textDocument: { uri: A, version: 3 }, edits: [{ range: at(0, 16, 0, 21), newText: 'welcome' }] },
      {
        textDocument: { uri: B, version: null },
        edits: [
          { range: at(0, 9, 0, 14), newText: 'welcome' },
          { range: at(1, 0, 1, 5), newText: 'welcome' },
        ],
      },
    ],
  });
});

test("code actions: only those with an edit, never agent_lsp's own", () => {
  const fix = {
    title: "Add missing import 'greet'",
    kind: { value: 'quickfix' },
    isPreferred: true,
    diagnostics: [{ range: at(1, 0, 1, 5), severity: 0, message: "Cannot find name 'greet'.", source: 'ts', code: 2304 }],
    edit: { entries: () => [[uri(B), [{ range: at(0, 0), newText: "import { greet } from './a';\n" }]]] as any },
  };
  const ours = { title: 'Ask agent to fix', kind: { value: 'quickfix' }, command: { command: 'agentLsp.followup' }, edit: fix.edit };
  const commandOnly = { title: 'Organize imports', command: { command: '_typescript.organizeImports' } };
  const bare = { title: 'Run it', command: 'editor.action.run' };
  const empty = { title: 'Nothing', edit: { entries: () => [] } };
  const actions = codeActions([fix, ours, commandOnly, bare, empty] as any, (c) => c.startsWith('agentLsp.'), () => 7);
  assert.deepEqual(actions, [
    {
      title: "Add missing import 'greet'",
      kind: 'quickfix',
      isPreferred: true,
      diagnostics: [{ range: at(1, 0, 1, 5), severity: 1, message: "Cannot find name 'greet'.", source: 'ts', code: 2304 }],
      edit: { documentChanges: [{ textDocument: { uri: B, version: 7 }, edits: [{ range: at(0, 0), newText: "import { greet } from './a';\n" }] }] },
    },
  ]);
});
