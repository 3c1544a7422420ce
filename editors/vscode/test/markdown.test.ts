import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isSafeLink, markdownToPlain, renderMarkdown, settledLength } from '../src/markdown';

test('markdown renders the usual constructs', () => {
  const html = renderMarkdown('# Title\n\nSome **bold** and `code`.\n\n```py\nprint(1 < 2)\n```\n\n- a\n- b\n');
  assert.match(html, /<h1>Title<\/h1>/);
  assert.match(html, /<strong>bold<\/strong>/);
  assert.match(html, /<code>code<\/code>/);
  assert.match(html, /<pre><code class="hljs language-py"><span class="hljs-built_in">print<\/span>\(<span class="hljs-number">1<\/span> &lt; <span class="hljs-number">2<\/span>\)/);
  assert.match(html, /<li>a<\/li>/);
});

test('raw HTML is shown as text, never as markup', () => {
  const html = renderMarkdown('hi <script>alert(1)</script> <img src=x onerror="alert(2)"> <iframe src="https://e.x"></iframe>');
  assert.doesNotMatch(html, /<script|<img|<iframe/i);
  assert.match(html, /&lt;script&gt;/);
});

test('images never load remote content', () => {
  const html = renderMarkdown('![tracker](https://evil.example/pixel.png) ![x](data:image/png;base64,AAAA)');
  assert.doesNotMatch(html, /<img/i);
  assert.match(html, /\[tracker\]/);
});

test('links keep only safe targets and never navigate the webview', () => {
  const bad = renderMarkdown('[x](javascript:alert(1)) [y](vbscript:z) [z](data:text/html,hi) [w](command:workbench.action.quit)');
  assert.doesNotMatch(bad, /<a /);
  const good = renderMarkdown('[docs](https://example.com/a?b=1&c=2) [file](src/app.py)');
  assert.match(good, /<a href="#" data-href="https:\/\/example.com\/a\?b=1&amp;c=2"/);
  assert.match(good, /data-href="src\/app.py"/);
  assert.equal(isSafeLink('file:///etc/passwd'), false);
  assert.equal(isSafeLink('//evil.example/x'), false);
});

test('an unfinished code fence while streaming still renders', () => {
  const html = renderMarkdown('Here:\n\n```js\nconst a = 1;');
  assert.match(html, /<pre><code class="hljs language-js"><span class="hljs-keyword">const<\/span> a = <span class="hljs-number">1<\/span>;/);
});

test('a code block is highlighted for its language and has Copy and Insert buttons', () => {
  const html = renderMarkdown('```python\ndef f():\n    return "<b>"\n```');
  assert.match(html, /<div class="code-block" data-language="python">/);
  assert.match(html, /data-code-action="copy"[^>]*>Copy</);
  assert.match(html, /data-code-action="insert"[^>]*>Insert</);
  assert.match(html, /<span class="hljs-keyword">def<\/span>/);
  assert.match(html, /&quot;&lt;b&gt;&quot;|"&lt;b&gt;"/); // the code's markup stays text
  assert.doesNotMatch(html, /<b>/);
});

test('a fence with an unknown or no language is escaped plain code, still with its buttons', () => {
  const html = renderMarkdown('```nosuchlang\n<script>x</script>\n```\n\n    indented <i>\n');
  assert.doesNotMatch(html, /<script>|<i>/);
  assert.equal((html.match(/class="code-block"/g) ?? []).length, 2);
  assert.match(html, /&lt;script&gt;x&lt;\/script&gt;/);
});

test('markdown becomes plain text for a notification', () => {
  assert.equal(markdownToPlain('Fixed **mean()** in `stats.py`: see [the docs](https://e.x).'), 'Fixed mean() in stats.py: see the docs.');
  assert.equal(markdownToPlain('# Done\n\n- one\n- two'), 'Done one two');
});

test('a streamed answer rendered block by block reads exactly as rendered whole', () => {
  const doc = [
    '# Plan',
    'First a paragraph\nwith a soft break and `code`.',
    '1. one\n2. two\n\n3. three (a loose list)',
    '```python\ndef f(x):\n\n    return x\n```',
    '| a | b |\n|---|---|\n| 1 | 2 |',
    'Setext heading\n---',
    '- a\n  - nested\n- b',
    '> quoted\ncontinued lazily',
    '    indented code',
    'The end with [a link](hello.py).',
  ].join('\n\n');
  let settled = 0;
  let html = '';
  for (let end = 1; end <= doc.length; end++) {
    const text = doc.slice(0, end);
    const cut = settled + settledLength(text.slice(settled));
    html += cut > settled ? renderMarkdown(text.slice(settled, cut)) : '';
    settled = cut;
  }
  assert.ok(settled > doc.length / 2, 'most of the answer was rendered once');
  assert.equal(html + renderMarkdown(doc.slice(settled)), renderMarkdown(doc));
});
