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

import * as vscode from 'vscode';
import { diagnostic } from './languageShapes';
import type { LanguageQueryResult } from './protocol';
import { diagnosticsOf, tsDiagnostic, TsResponse } from './typescriptShapes';

const EXTENSION = 'vscode.typescript-language-features';
const COMMAND = 'typescript.tsserverRequest';
const LANGUAGES = new Set(['typescript', 'typescriptreact', 'javascript', 'javascriptreact']);
const SERVERS = ['ts'];
/** Other open TypeScript documents checked with the one asked about (the files an edit may break). */
const MAX_OTHERS = 50;

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
 * at `version`; with `everywhere`, the other open TypeScript documents are
 * checked too and the other files' diagnostics are VS Code's. Undefined when
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
    const others = vscode.workspace.textDocuments.filter((d) => d !== doc && !d.isClosed && servedByTypeScript(d));
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
  if (everywhere) {
    const ours = new Set(checked.map((d) => d.uri.toString()));
    for (const [uri, ds] of vscode.languages.getDiagnostics()) {
      if (!ours.has(uri.toString()) && ds.length > 0) {
        files.push({ uri: uri.toString(), diagnostics: ds.map((d) => diagnostic(d)) });
      }
    }
  }
  return { servers: SERVERS, files };
}
