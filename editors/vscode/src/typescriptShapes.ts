// TypeScript server diagnostics in LSP's shape, as VS Code's built-in
// TypeScript extension shows them (its severities, its source "ts"). No vscode
// import, so the conversion is unit tested.

/** A diagnostic as the TypeScript server sends it: 1-based lines and offsets (UTF-16). */
export interface TsDiagnostic {
  start: { line: number; offset: number };
  end: { line: number; offset: number };
  text: string;
  code?: number;
  category: string; // "error" | "warning" | "suggestion" | "message"
  source?: string;
}

/** The answer of a TypeScript server request relayed by `typescript.tsserverRequest`. */
export interface TsResponse {
  type?: string;
  success?: boolean;
  body?: unknown;
}

// The "style check" problems VS Code's TypeScript shows as warnings while
// `typescript.reportStyleChecksAsWarnings` is on (its default): unused
// declarations, imports and labels, unreachable code, fall-through cases,
// code paths without a return.
const STYLE_CHECKS = new Set([6133, 6196, 6138, 6192, 7027, 7028, 7029, 7030]);

/** LSP's severity (1 error … 4 hint) VS Code's TypeScript gives a diagnostic. */
export function severityOf(d: TsDiagnostic, styleChecksAsWarnings: boolean): number {
  if (styleChecksAsWarnings && d.category === 'error' && d.code !== undefined && STYLE_CHECKS.has(d.code)) {
    return 2;
  }
  switch (d.category) {
    case 'warning':
      return 2;
    case 'suggestion':
      return 4;
    default:
      return 1; // "error", and what VS Code's TypeScript also shows as an error ("message")
  }
}

/** An LSP Diagnostic (0-based positions) from a TypeScript server diagnostic. */
export function tsDiagnostic(d: TsDiagnostic, styleChecksAsWarnings: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    range: {
      start: { line: d.start.line - 1, character: d.start.offset - 1 },
      end: { line: d.end.line - 1, character: d.end.offset - 1 },
    },
    severity: severityOf(d, styleChecksAsWarnings),
    message: d.text,
    source: d.source ?? 'ts',
  };
  if (d.code !== undefined) {
    out.code = d.code;
  }
  return out;
}

/** The diagnostics of a successful response; undefined when the server did not answer (starting, cancelled, no such request). */
export function diagnosticsOf(response: TsResponse | undefined): TsDiagnostic[] | undefined {
  if (!response || response.type !== 'response' || response.success !== true || !Array.isArray(response.body)) {
    return undefined;
  }
  return response.body as TsDiagnostic[];
}
