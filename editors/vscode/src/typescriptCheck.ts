// The problems of TypeScript and JavaScript documents, asked of VS Code's
// built-in TypeScript server itself, for agent/languageQuery diagnostics.
//
// VS Code's TypeScript publishes a file's diagnostics only when they change,
// a while after the last keystroke, and only for files open in editor tabs:
// waiting for its report cannot tell "checked, still clean" from "not checked
// yet". So the document is checked on request instead: the TypeScript
// server's own syntactic and semantic diagnostics of the document as VS Code
// holds it now (VS Code sends the server its pending changes before each
// request), through the TypeScript extension's `typescript.tsserverRequest`
// command. A document that is not open in VS Code is opened unseen first, so
// the server knows it. The answer is for the version asked, or `pending`.
//
// With `everywhere` (the problems an edit added), the files that import the
// document are checked too, opened unseen where no tab has them: a changed
// signature breaks its callers, which VS Code's TypeScript checks only when
// they are open (typescriptImporters.ts finds them, within the time given;
// none when the search takes longer). The answer lists every other document
// it checked (`checked`), so the agent tells a caller checked only after the
// edit from one that was clean before it.

import * as vscode from 'vscode';
import { diagnostic } from './languageShapes';
import type { LanguageQueryResult } from './protocol';
import { EXCLUDE_GLOB, imports, mayImport, SOURCE_GLOB } from './typescriptImporters';
import { diagnosticsOf, tsDiagnostic, TsResponse } from './typescriptShapes';

const EXTENSION = 'vscode.typescript-language-features';
const COMMAND = 'typescript.tsserverRequest';
const LANGUAGES = new Set(['typescript', 'typescriptreact', 'javascript', 'javascriptreact']);
const SERVERS = ['ts'];
/** Other open TypeScript documents checked with the one asked about (the files an edit may break). */
const MAX_OTHERS = 50;
/** Importers of the document checked with it (the first, by path). */
const MAX_IMPORTERS = 20;
/** Files looked at to find a document's importers, and how many are read at once. */
const MAX_SCANNED = 5000;
const READ_BATCH = 64;

let commandFound = false;

/** Whether VS Code's built-in TypeScript checks this document (installed, and validation on for its language). */
export function servedByTypeScript(doc: vscode.TextDocument): boolean {
  if (!LANGUAGES.has(doc.languageId) || doc.uri.scheme !== 'file' || !vscode.extensions.getExtension(EXTENSION)) {
    return false;
  }
  const section = doc.languageId.startsWith('javascript') ? 'javascript' : 'typescript';
  return vscode.workspace.getConfiguration(section, doc.uri).get<boolean>('validate.enable', true);
}

async function commandAvailable(): Promise<boolean> {
  if (!commandFound) {
    const extension = vscode.extensions.getExtension(EXTENSION);
    if (extension && !extension.isActive) {
      await Promise.resolve(extension.activate()).catch(() => undefined); // failed: the command is not there either
    }
    commandFound = (await vscode.commands.getCommands(true)).includes(COMMAND);
  }
  return commandFound;
}

/** TypeScript's diagnostics of `doc` as VS Code holds it now; undefined when the server did not answer. */
async function check(doc: vscode.TextDocument, styleChecksAsWarnings: boolean): Promise<Record<string, unknown>[] | undefined> {
  const ask = (request: string) =>
    Promise.resolve(vscode.commands.executeCommand<TsResponse>(COMMAND, request, { file: doc.uri })).then(diagnosticsOf, () => undefined);
  const [syntactic, semantic] = await Promise.all([ask('syntacticDiagnosticsSync'), ask('semanticDiagnosticsSync')]);
  if (syntactic === undefined || semantic === undefined) {
    return undefined;
  }
  return [...syntactic, ...semantic].map((d) => tsDiagnostic(d, styleChecksAsWarnings));
}

async function findImporters(doc: vscode.TextDocument, token: vscode.CancellationToken): Promise<vscode.Uri[]> {
  const folder = vscode.workspace.getWorkspaceFolder(doc.uri);
  const files = await vscode.workspace.findFiles(folder ? new vscode.RelativePattern(folder, SOURCE_GLOB) : SOURCE_GLOB,
    EXCLUDE_GLOB, MAX_SCANNED, token);
  const target = doc.uri.fsPath;
  const open = new Map(vscode.workspace.textDocuments.map((d) => [d.uri.toString(), d]));
  const decoder = new TextDecoder();
  const found: vscode.Uri[] = [];
  const candidates = files.filter((uri) => uri.toString() !== doc.uri.toString());
  for (let i = 0; i < candidates.length && !token.isCancellationRequested; i += READ_BATCH) {
    const texts = await Promise.all(candidates.slice(i, i + READ_BATCH).map(async (uri) => {
      const buffer = open.get(uri.toString());
      return buffer ? buffer.getText() : Promise.resolve(vscode.workspace.fs.readFile(uri)).then((b) => decoder.decode(b), () => '');
    }));
    texts.forEach((text, j) => {
      const uri = candidates[i + j];
      if (mayImport(text, target) && imports(uri.fsPath, text, target)) {
        found.push(uri);
      }
    });
  }
  return found.sort((a, b) => a.toString().localeCompare(b.toString()));
}

/** The files that import `doc`, opened (unseen where no tab has them); none if the search takes longer than `timeoutMs`. */
async function importersOf(doc: vscode.TextDocument, timeoutMs: number): Promise<vscode.TextDocument[]> {
  const search = new vscode.CancellationTokenSource();
  const found = await within(findImporters(doc, search.token).catch(() => []), timeoutMs);
  search.cancel(); // a search past its time stops reading files
  search.dispose();
  if (found === 'late') {
    return [];
  }
  const opened = await Promise.all(found.slice(0, MAX_IMPORTERS).map((uri) =>
    Promise.resolve(vscode.workspace.openTextDocument(uri)).then((d) => d, () => undefined)));
  return opened.filter((d): d is vscode.TextDocument => d !== undefined && servedByTypeScript(d));
}

/** No answer for the version asked: `pending`, with what VS Code shows (the agent never takes it as the new problems). */
function late(): LanguageQueryResult {
  const files = vscode.languages.getDiagnostics().filter(([, ds]) => ds.length > 0);
  return { servers: SERVERS, pending: true, files: files.map(([uri, ds]) => ({ uri: uri.toString(), diagnostics: ds.map((d) => diagnostic(d)) })) };
}

function within<T>(work: Promise<T>, ms: number): Promise<T | 'late'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), Math.max(0, ms))));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * The diagnostics answer for a document VS Code's TypeScript serves, checked
 * at `version`; with `everywhere`, the files that import it and the other open
 * TypeScript documents are checked too (listed in `checked`), and the other
 * files' diagnostics are VS Code's. Undefined when
 * the TypeScript server cannot be asked (then VS Code's reports are waited for).
 * @param atVersion waits, at most the time given, until the document has the version asked; whether it did
 */
export async function typescriptDiagnostics(
  doc: vscode.TextDocument,
  atVersion: (timeoutMs: number) => Promise<boolean>,
  version: number,
  everywhere: boolean,
  timeoutMs: number,
): Promise<LanguageQueryResult | undefined> {
  const deadline = Date.now() + timeoutMs;
  const available = await within(commandAvailable(), timeoutMs); // the extension may still be starting
  if (available === 'late') {
    return late();
  }
  if (!available) {
    return undefined;
  }
  if (!(await atVersion(deadline - Date.now()))) {
    return late();
  }
  const checked = [doc];
  if (everywhere) {
    const importers = await importersOf(doc, (deadline - Date.now()) / 2); // half the time: the checks need the rest
    const open = vscode.workspace.textDocuments.filter((d) => d !== doc && !d.isClosed && servedByTypeScript(d));
    const others = [...new Map([...importers, ...open].map((d) => [d.uri.toString(), d])).values()].filter((d) => d !== doc);
    checked.push(...others.slice(0, MAX_OTHERS));
  }
  const styleChecksAsWarnings = vscode.workspace.getConfiguration('typescript').get<boolean>('reportStyleChecksAsWarnings', true);
  const found = await within(Promise.all(checked.map((d) => check(d, styleChecksAsWarnings))), deadline - Date.now());
  if (found === 'late') {
    return late();
  }
  if (found.some((ds) => ds === undefined)) {
    return undefined;
  }
  if (doc.version !== version) {
    return late(); // the buffer changed meanwhile: that check was of a later text
  }
  const files = checked.map((d, i) => ({ uri: d.uri.toString(), diagnostics: found[i]! })).filter((f, i) => i === 0 || f.diagnostics.length > 0);
  if (!everywhere) {
    return { servers: SERVERS, files };
  }
  const ours = new Set(checked.map((d) => d.uri.toString()));
  for (const [uri, ds] of vscode.languages.getDiagnostics()) {
    if (!ours.has(uri.toString()) && ds.length > 0) {
      files.push({ uri: uri.toString(), diagnostics: ds.map((d) => diagnostic(d)) });
    }
  }
  return { servers: SERVERS, files, checked: checked.slice(1).map((d) => d.uri.toString()) };
}
