// agent/languageQuery: the agent asks VS Code's own language features (the
// user's language extensions, on the live buffers) and gets LSP's shapes back
// (docs/protocol.md#language-queries). agent_lsp's own providers are never
// asked for: diagnostics are VS Code's, the others go through the
// vscode.execute*Provider commands, whose answers from agent_lsp (its code
// actions) are left out.

import * as vscode from 'vscode';
import type { LanguageQueryParams, LanguageQueryResult } from './protocol';
import { codeActions, diagnostic, hoverText, location, symbol, workspaceEdit } from './languageShapes';
import { servedByTypeScript, typescriptDiagnostics } from './typescriptCheck';

const NONE: LanguageQueryResult = { servers: [] };
/** Code actions VS Code resolves (their edits) before answering. */
const RESOLVE_ACTIONS = 50;

/**
 * What VS Code's diagnostics said, and when: the languages some language
 * feature reports diagnostics for, and for each document the version it had
 * at its last diagnostics report.
 */
export class DiagnosticsWatch implements vscode.Disposable {
  readonly languages = new Set<string>();
  private readonly reportedAt = new Map<string, number>();
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly subscriptions: vscode.Disposable[];

  constructor() {
    this.subscriptions = [
      vscode.languages.onDidChangeDiagnostics((e) => {
        for (const uri of e.uris) {
          const doc = openDocument(uri.toString());
          if (doc) {
            this.reportedAt.set(uri.toString(), doc.version);
            if (vscode.languages.getDiagnostics(uri).length > 0) {
              this.languages.add(doc.languageId);
            }
          }
        }
        this.changed.fire();
      }),
      vscode.workspace.onDidChangeTextDocument(() => this.changed.fire()),
      this.changed,
    ];
  }

  /** Whether the document has `version` and its diagnostics were reported after it got there. */
  reported(uri: string, version: number): boolean {
    return openDocument(uri)?.version === version && this.reportedAt.get(uri) === version;
  }

  /** Until `ready()`, at most `timeoutMs`; whether it became so. */
  async until(ready: () => boolean, timeoutMs: number): Promise<boolean> {
    if (ready()) {
      return true;
    }
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        listener.dispose();
        resolve(ok);
      };
      const timer = setTimeout(() => done(ready()), timeoutMs);
      const listener = this.changed.event(() => {
        if (ready()) {
          done(true);
        }
      });
    });
  }

  dispose(): void {
    for (const s of this.subscriptions) {
      s.dispose();
    }
  }
}

function openDocument(uri: string): vscode.TextDocument | undefined {
  return vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
}

function versionOf(uri: string): number | null {
  return openDocument(uri)?.version ?? null;
}

function filesOf(entries: [vscode.Uri, readonly vscode.Diagnostic[]][]): { uri: string; diagnostics: any[] }[] {
  return entries.filter(([, ds]) => ds.length > 0).map(([uri, ds]) => ({ uri: uri.toString(), diagnostics: ds.map((d) => diagnostic(d)) }));
}

function serverNames(diagnostics: readonly vscode.Diagnostic[], languageId: string): string[] {
  const sources = [...new Set(diagnostics.map((d) => d.source).filter((s): s is string => !!s))];
  return sources.length ? sources : [languageId];
}

async function diagnostics(params: LanguageQueryParams, watch: DiagnosticsWatch): Promise<LanguageQueryResult> {
  const document = params.textDocument;
  const everywhere = () => filesOf(vscode.languages.getDiagnostics() as [vscode.Uri, vscode.Diagnostic[]][]);
  if (!document) {
    const all = vscode.languages.getDiagnostics();
    const sources = [...new Set(all.flatMap(([, ds]) => ds.map((d) => d.source ?? '')).filter((s) => s))];
    return watch.languages.size ? { servers: sources.length ? sources : [...watch.languages], files: everywhere() } : NONE;
  }
  const uri = vscode.Uri.parse(document.uri);
  // a document not open in the editor is opened unseen, so its language features check it
  const doc = openDocument(document.uri) ?? (await vscode.workspace.openTextDocument(uri));
  const version = document.version ?? doc.version;
  if (servedByTypeScript(doc)) {
    // VS Code's TypeScript is asked to check this version rather than waited for
    const atVersion = (ms: number) => watch.until(() => openDocument(document.uri)?.version === version, Math.max(0, ms));
    const checked = await typescriptDiagnostics(doc, atVersion, version, !!params.everywhere, params.timeoutMs);
    if (checked) {
      return checked;
    }
  }
  const own = vscode.languages.getDiagnostics(uri);
  if (!watch.languages.has(doc.languageId) && own.length === 0) {
    return NONE; // no language feature reports diagnostics for this language: the agent asks its own servers
  }
  const pending = !(await watch.until(() => watch.reported(document.uri, version), params.timeoutMs));
  const now = vscode.languages.getDiagnostics(uri);
  const answer: LanguageQueryResult = { servers: serverNames(now.length ? now : own, doc.languageId) };
  answer.files = params.everywhere ? everywhere() : filesOf([[uri, now]]);
  if (pending) {
    answer.pending = true;
  }
  return answer;
}

async function execute<T>(command: string, ...args: unknown[]): Promise<T | undefined> {
  return vscode.commands.executeCommand<T>(command, ...args);
}

function position(p: { line: number; character: number } | null | undefined): vscode.Position {
  return new vscode.Position(p?.line ?? 0, p?.character ?? 0);
}

function named(languageId: string | undefined): string[] {
  return [languageId ?? 'vscode'];
}

async function provided(params: LanguageQueryParams, ours: (command: string) => boolean): Promise<LanguageQueryResult> {
  if (params.kind === 'workspaceSymbols') {
    const found = await execute<vscode.SymbolInformation[]>('vscode.executeWorkspaceSymbolProvider', params.query ?? '');
    return found?.length ? { servers: ['vscode'], symbols: found.map((s) => symbol(s)) } : NONE;
  }
  if (!params.textDocument) {
    return NONE;
  }
  const uri = vscode.Uri.parse(params.textDocument.uri);
  const doc = openDocument(params.textDocument.uri) ?? (await vscode.workspace.openTextDocument(uri));
  const servers = named(doc.languageId);
  switch (params.kind) {
    case 'definition':
    case 'references': {
      const command = params.kind === 'definition' ? 'vscode.executeDefinitionProvider' : 'vscode.executeReferenceProvider';
      const found = await execute<(vscode.Location | vscode.LocationLink)[]>(command, uri, position(params.position));
      return found?.length ? { servers, locations: found.map((l) => location(l)) } : NONE;
    }
    case 'hover': {
      const found = await execute<vscode.Hover[]>('vscode.executeHoverProvider', uri, position(params.position));
      const text = found?.length ? hoverText(found) : '';
      return text ? { servers, hover: text } : NONE;
    }
    case 'documentSymbols': {
      const found = await execute<(vscode.SymbolInformation & vscode.DocumentSymbol)[]>('vscode.executeDocumentSymbolProvider', uri);
      return found?.length ? { servers, symbols: found.map((s) => symbol(s)) } : NONE;
    }
    case 'rename': {
      const found = await execute<vscode.WorkspaceEdit>('vscode.executeDocumentRenameProvider', uri, position(params.position), params.newName ?? '');
      const entries = found?.entries() ?? [];
      return entries.length ? { servers, edit: workspaceEdit(entries, versionOf) } : NONE;
    }
    case 'codeActions': {
      const r = params.range;
      const range = new vscode.Range(position(r?.start), position(r?.end));
      const found = await execute<(vscode.CodeAction | vscode.Command)[]>('vscode.executeCodeActionProvider', uri, range, undefined, RESOLVE_ACTIONS);
      const actions = codeActions((found ?? []) as any[], ours, versionOf);
      return actions.length ? { servers, actions } : NONE;
    }
    default:
      throw new Error(`unknown language query kind: ${String(params.kind)}`);
  }
}

/**
 * The handler of agent/languageQuery.
 * @param encoding the position encoding negotiated with the server (VS Code's positions are UTF-16)
 * @param ours whether a command id is one of agent_lsp's own (its code actions are never relayed)
 */
export function languageQueryHandler(
  watch: DiagnosticsWatch,
  encoding: () => string | undefined,
  ours: (command: string) => boolean,
): (params: LanguageQueryParams) => Promise<LanguageQueryResult> {
  return async (params) => {
    const negotiated = encoding() ?? 'utf-16';
    if (negotiated !== 'utf-16') {
      return NONE; // positions would need converting: the agent asks its own servers
    }
    if (params.kind === 'diagnostics') {
      return diagnostics(params, watch);
    }
    return provided(params, ours);
  };
}
