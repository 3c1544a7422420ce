// Code blocks of the transcript: highlighted with highlight.js (the fence's
// language, when it names one it knows: guessing costs too much while an
// answer streams and re-renders every frame) and topped by Copy and Insert
// buttons, which the panel script wires up (the extension copies, or inserts
// at the active editor's cursor).

import hljs from 'highlight.js/lib/common';

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The code as HTML: highlight.js spans (it escapes the text) or the escaped text. */
export function highlightCode(code: string, language: string): string {
  if (language && hljs.getLanguage(language)) {
    return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  }
  return escapeHtml(code);
}

/** One fenced block: `info` is the fence's info string (```py → "py"). */
export function codeBlockHtml(code: string, info: string): string {
  const language = info.trim().split(/\s+/)[0] ?? '';
  const known = !!language && !!hljs.getLanguage(language);
  const cls = language ? ` class="hljs language-${escapeHtml(language)}"` : ' class="hljs"';
  return (
    `<div class="code-block"${known ? ` data-language="${escapeHtml(language)}"` : ''}>` +
    '<div class="code-actions">' +
    '<button class="code-action" data-code-action="copy" title="Copy the code">Copy</button>' +
    '<button class="code-action" data-code-action="insert" title="Insert at the cursor of the active editor">Insert</button>' +
    '</div>' +
    `<pre><code${cls}>${highlightCode(code, language)}</code></pre></div>\n`
  );
}
