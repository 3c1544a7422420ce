import { test } from 'node:test';
import assert from 'node:assert/strict';
import { languageStatusLines } from '../src/languageStatus';
import type { LanguageServerStatus } from '../src/protocol';

const A = 'file:///w/app';
const B = 'file:///w/lib';
const server = (workspaceUri: string, name: string, state: LanguageServerStatus['state'], reason: string, extra: Partial<LanguageServerStatus> = {}): LanguageServerStatus => ({
  workspaceUri,
  name,
  state,
  reason,
  filetypes: ['py', 'pyi'],
  command: `${name} --stdio`,
  source: 'built-in',
  ...extra,
});

test("the Check report lists each folder's language servers with their state and why, where they run, and who answers first", () => {
  const lines = languageStatusLines(
    {
      editorFirst: true,
      servers: [
        server(A, 'basedpyright', 'running', 'built-in, found at /bin/basedpyright-langserver', { sandbox: 'sandboxed, no network' }),
        server(A, 'pyright', 'other-serves', 'basedpyright serves these files'),
        server(A, 'clangd', 'not-found', '`clangd` not found (configuration only, untested here)', { filetypes: ['c', 'cpp'], command: 'clangd' }),
        server(B, 'ruff', 'found', 'built-in, found at /bin/ruff; starts with the first file of its kind', { command: 'ruff server', sandbox: 'not sandboxed: bubblewrap is not installed' }),
        server(B, 'mypy-ls', 'failed', 'exited with code 1 before it answered', { source: 'settings' }),
      ],
    },
    (uri) => uri.split('/').pop()!,
  );
  assert.match(lines[0], /^Language servers: VS Code's own language features answer the agent first/);
  assert.deepEqual(lines.slice(1), [
    '  app',
    '    basedpyright  running   built-in, found at /bin/basedpyright-langserver; sandboxed, no network (py, pyi: basedpyright --stdio)',
    '    pyright       not used  basedpyright serves these files (py, pyi: pyright --stdio)',
    '    clangd        not used  `clangd` not found (configuration only, untested here) (c, cpp: clangd)',
    '  lib',
    '    ruff     used    built-in, found at /bin/ruff; starts with the first file of its kind; not sandboxed: bubblewrap is not installed (py, pyi: ruff server)',
    '    mypy-ls  failed  exited with code 1 before it answered (py, pyi: mypy-ls --stdio, from the settings)',
  ]);
});

test('with no folder the report says so; a client that does not relay is answered by the agent alone', () => {
  assert.deepEqual(languageStatusLines({ editorFirst: false, servers: [] }, (u) => u), [
    'Language servers: the agent asks its own servers, below.',
    '  none known (no folder is open)',
  ]);
});
