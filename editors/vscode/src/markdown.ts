// Markdown for the transcript, safe by construction: raw HTML is escaped,
// images never load (no remote content: they render as their alt text), and
// links keep only http(s)/mailto targets or workspace-relative paths. The
// webview's CSP (no inline script, no remote sources) is the second wall.

import MarkdownIt from 'markdown-it';

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
  return md;
}

let renderer: MarkdownIt | null = null;

export function renderMarkdown(source: string): string {
  renderer ??= createRenderer();
  return renderer.render(source);
}
