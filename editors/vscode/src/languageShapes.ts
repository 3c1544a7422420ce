// VS Code's language results in LSP's JSON shapes, for agent/languageQuery.
// Structural types only (no vscode import), so the conversions are unit tested:
// a vscode.Range, Location, Diagnostic, … fits the interfaces below. Positions
// pass through unchanged: VS Code's are UTF-16, the encoding the server speaks
// with this extension.

export interface Pos {
  line: number;
  character: number;
}
export interface Rng {
  start: Pos;
  end: Pos;
}
/** A vscode.Uri (its toString() is the URI). */
export interface UriLike {
  toString(): string;
}

export interface LspRange {
  start: Pos;
  end: Pos;
}

export function range(r: Rng): LspRange {
  return { start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } };
}

export interface DiagnosticLike {
  range: Rng;
  message: string;
  /** vscode.DiagnosticSeverity: Error 0, Warning 1, Information 2, Hint 3 */
  severity: number;
  source?: string;
  code?: string | number | { value: string | number; target?: UriLike };
}

/** LSP's Diagnostic: severity 1 (error) to 4 (hint). */
export function diagnostic(d: DiagnosticLike): Record<string, unknown> {
  const out: Record<string, unknown> = { range: range(d.range), severity: d.severity + 1, message: d.message };
  if (d.source) {
    out.source = d.source;
  }
  const code = typeof d.code === 'object' && d.code !== null ? d.code.value : d.code;
  if (code !== undefined && code !== '') {
    out.code = code;
  }
  return out;
}

export interface LocationLike {
  uri: UriLike;
  range: Rng;
}
export interface LocationLinkLike {
  targetUri: UriLike;
  targetRange: Rng;
  targetSelectionRange?: Rng;
  originSelectionRange?: Rng;
}

/** LSP's Location, or LocationLink for a link. */
export function location(l: LocationLike | LocationLinkLike): Record<string, unknown> {
  if ('targetUri' in l) {
    const out: Record<string, unknown> = {
      targetUri: l.targetUri.toString(),
      targetRange: range(l.targetRange),
      targetSelectionRange: range(l.targetSelectionRange ?? l.targetRange),
    };
    if (l.originSelectionRange) {
      out.originSelectionRange = range(l.originSelectionRange);
    }
    return out;
  }
  return { uri: l.uri.toString(), range: range(l.range) };
}

export interface SymbolLike {
  name: string;
  /** vscode.SymbolKind: LSP's kind minus one */
  kind: number;
  detail?: string;
  containerName?: string;
  range?: Rng;
  selectionRange?: Rng;
  children?: SymbolLike[];
  location?: LocationLike;
}

/** LSP's DocumentSymbol (with a selectionRange) or SymbolInformation. */
export function symbol(s: SymbolLike): Record<string, unknown> {
  if (s.range && s.selectionRange) {
    return {
      name: s.name,
      detail: s.detail ?? '',
      kind: s.kind + 1,
      range: range(s.range),
      selectionRange: range(s.selectionRange),
      children: (s.children ?? []).map(symbol),
    };
  }
  const out: Record<string, unknown> = { name: s.name, kind: s.kind + 1, location: location(s.location!) };
  if (s.containerName) {
    out.containerName = s.containerName;
  }
  return out;
}

/** A MarkdownString, a plain string, or a `{language, value}` code block. */
export type HoverPart = string | { value: string; language?: string };

/** The text of VS Code's hovers, one part after another. */
export function hoverText(hovers: { contents: HoverPart[] }[]): string {
  const parts: string[] = [];
  for (const hover of hovers) {
    for (const part of hover.contents) {
      const text = typeof part === 'string' ? part : part.language ? '```' + part.language + '\n' + part.value + '\n```' : part.value;
      if (text.trim()) {
        parts.push(text);
      }
    }
  }
  return parts.join('\n\n');
}

export interface TextEditLike {
  range: Rng;
  newText: string;
}

/**
 * LSP's WorkspaceEdit with one versioned TextDocumentEdit per file (the version
 * of the open document it was computed on; null for a file not open).
 */
export function workspaceEdit(entries: [UriLike, TextEditLike[]][], versionOf: (uri: string) => number | null): Record<string, unknown> {
  return {
    documentChanges: entries.map(([uri, edits]) => ({
      textDocument: { uri: uri.toString(), version: versionOf(uri.toString()) },
      edits: edits.map((e) => ({ range: range(e.range), newText: e.newText })),
    })),
  };
}

export interface CodeActionLike {
  title: string;
  kind?: { value: string };
  isPreferred?: boolean;
  diagnostics?: DiagnosticLike[];
  edit?: { entries(): [UriLike, TextEditLike[]][] };
  /** a vscode.Command, or for a bare Command its id */
  command?: { command: string } | string;
}

/**
 * LSP's CodeActions that carry an edit (a bare command, which only VS Code
 * could run, is left out), never one of agent_lsp's own (`ours` says which).
 */
export function codeActions(
  items: CodeActionLike[],
  ours: (command: string) => boolean,
  versionOf: (uri: string) => number | null,
): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const item of items) {
    const command = typeof item.command === 'string' ? item.command : item.command?.command;
    if (!item.edit || (command && ours(command))) {
      continue;
    }
    const entries = item.edit.entries();
    if (entries.length === 0) {
      continue;
    }
    const action: Record<string, unknown> = { title: item.title, edit: workspaceEdit(entries, versionOf) };
    if (item.kind) {
      action.kind = item.kind.value;
    }
    if (item.isPreferred) {
      action.isPreferred = true;
    }
    if (item.diagnostics?.length) {
      action.diagnostics = item.diagnostics.map(diagnostic);
    }
    out.push(action);
  }
  return out;
}
