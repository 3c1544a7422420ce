import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isSafeLink, renderMarkdown } from '../src/markdown';

test('markdown renders the usual constructs', () => {
  const html = renderMarkdown('# Title\n\nSome **bold** and `code`.\n\n```py\nprint(1 < 2)\n```\n\n- a\n- b\n');
  assert.match(html, /<h1>Title<\/h1>/);
  assert.match(html, /<strong>bold<\/strong>/);
  assert.match(html, /<code>code<\/code>/);
  assert.match(html, /<pre><code class="language-py">print\(1 &lt; 2\)/);
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
  assert.match(html, /<pre><code class="language-js">const a = 1;/);
});
