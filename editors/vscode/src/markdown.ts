// Markdown for the transcript, safe by construction: raw HTML is escaped,
// images never load (no remote content: they render as their alt text), and
// links keep only http(s)/mailto targets or workspace-relative paths. The
// webview's CSP (no inline script, no remote sources) is the second wall.

import MarkdownIt from 'markdown-it';
import { codeBlockHtml } from './codeBlocks';

const SAFE_LINK = /^(https?:|mailto:)/i;
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

export function isSafeLink(url: string): boolean {
  const trimmed = url.trim();
  if (SAFE_LINK.test(trimmed)) {
    return true;
  }
  // A relative path (a file in the workspace) is fine; any other scheme is not.
  return !HAS_SCHEME.test(trimmed) && !trimmed.startsWith('//');
}

function createRenderer(): MarkdownIt {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false, breaks: false });
  md.validateLink = isSafeLink;
  md.renderer.rules.image = (tokens, idx) => {
    const alt = tokens[idx].content || 'image';
    return `<span class="md-image">[${md.utils.escapeHtml(alt)}]</span>`;
  };
  // Links are opened by the extension (the webview posts a message), never
  // navigated by the webview itself.
  md.renderer.rules.link_open = (tokens, idx) => {
    const href = tokens[idx].attrGet('href') ?? '';
    return `<a href="#" data-href="${md.utils.escapeHtml(href)}" title="${md.utils.escapeHtml(href)}">`;
  };
  md.renderer.rules.fence = (tokens, idx) => codeBlockHtml(tokens[idx].content, tokens[idx].info);
  md.renderer.rules.code_block = (tokens, idx) => codeBlockHtml(tokens[idx].content, '');
  return md;
}

let renderer: MarkdownIt | null = null;

export function renderMarkdown(source: string): string {
  renderer ??= createRenderer();
  return renderer.render(source);
}

/** How much of `source` (an answer still streaming) is finished blocks:
 * the offset where its last top-level block starts (0 while there is only
 * one, or while its first line is still incomplete). A block followed by
 * another one is closed for good in Markdown (its text can no longer change
 * how it reads), so the panel renders it once and
 * re-renders only the open block after it. */
export function settledLength(source: string): number {
  renderer ??= createRenderer();
  let last = -1;
  let blocks = 0;
  for (const token of renderer.parse(source, {})) {
    if (token.level === 0 && token.nesting !== -1 && token.map) {
      blocks++;
      last = token.map[0];
    }
  }
  if (blocks < 2) {
    return 0;
  }
  let offset = 0;
  for (let line = 0; line < last; line++) {
    offset = source.indexOf('\n', offset) + 1;
  }
  // Until its first line is complete the last block may still turn out to
  // continue the one before ("3" becoming "3. three" of a list above).
  return source.includes('\n', offset) ? offset : 0;
}

/** Markdown as the plain text a reader sees (for notifications, which show
 * their text as is): no `**`, backticks or link targets. */
export function markdownToPlain(source: string): string {
  renderer ??= createRenderer();
  const words: string[] = [];
  for (const token of renderer.parse(source, {})) {
    if (token.type === 'inline') {
      for (const child of token.children ?? []) {
        if (child.type === 'text' || child.type === 'code_inline') {
          words.push(child.content);
        } else if (child.type === 'softbreak' || child.type === 'hardbreak') {
          words.push(' ');
        } else if (child.type === 'image') {
          words.push(child.content);
        }
      }
    } else if (token.type === 'fence' || token.type === 'code_block') {
      words.push(token.content);
    }
    if (token.block && token.nesting === -1) {
      words.push(' ');
    }
  }
  return words.join('').replace(/\s+/g, ' ').trim();
}
