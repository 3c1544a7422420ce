// An answer's Markdown in the transcript. While it streams, its finished
// blocks are rendered once and appended; only the open block after them is
// rendered again on each update (a 5,000-line answer costs a frame per
// update, not a re-render of all it said so far). An answer that is not
// streaming (loaded from the log) is rendered whole.

import { settledLength, renderMarkdown } from '../markdown';
import type { TextItem } from '../transcript';

/** Per node: how much of the text is rendered for good, and the open block's element. */
const drawn = new WeakMap<HTMLElement, { settled: number; tail: HTMLElement }>();

export function renderAnswerText(node: HTMLElement, item: TextItem): void {
  node.className = `item assistant markdown${item.streaming ? ' streaming' : ''}`;
  let d = drawn.get(node);
  if (!d || item.text.length < d.settled) {
    if (!item.streaming) {
      node.innerHTML = renderMarkdown(item.text);
      drawn.delete(node);
      return;
    }
    const tail = document.createElement('div');
    tail.className = 'md-open';
    node.replaceChildren(tail);
    d = { settled: 0, tail };
    drawn.set(node, d);
  }
  if (item.streaming) {
    const cut = d.settled + settledLength(item.text.slice(d.settled));
    if (cut > d.settled) {
      d.tail.insertAdjacentHTML('beforebegin', renderMarkdown(item.text.slice(d.settled, cut)));
      d.settled = cut;
    }
  }
  d.tail.innerHTML = renderMarkdown(item.text.slice(d.settled));
}
