// The panel's summary of the agent's changes waiting for review (runs in the
// webview): a head line, each changed file (a click opens it) with how many
// changes wait in it, and Keep all / Undo all.

import type { ReviewFile } from '../reviewSummary';
import { post } from './dom';

export function renderReviewSummary(section: HTMLElement, headline: string, files: ReviewFile[]): void {
  section.hidden = files.length === 0;
  if (!files.length) {
    section.replaceChildren();
    return;
  }
  const head = document.createElement('div');
  head.className = 'review-head';
  const title = document.createElement('span');
  title.className = 'review-title';
  title.textContent = headline;
  const keep = document.createElement('button');
  keep.className = 'review-keep';
  keep.textContent = 'Keep all';
  keep.addEventListener('click', () => post({ type: 'review', action: 'keep' }));
  const undo = document.createElement('button');
  undo.className = 'review-undo';
  undo.textContent = 'Undo all';
  undo.addEventListener('click', () => post({ type: 'review', action: 'undo' }));
  head.append(title, keep, undo);
  const list = document.createElement('ul');
  list.className = 'review-files';
  for (const file of files) {
    const item = document.createElement('li');
    const open = document.createElement('button');
    open.className = 'link';
    open.textContent = file.label;
    open.title = 'Open the file (its changes have Keep / Undo above them)';
    open.addEventListener('click', () => post({ type: 'review', action: 'open', uri: file.uri }));
    const count = document.createElement('span');
    count.className = 'review-count';
    count.textContent = ` ${file.changes}`;
    item.append(open, count);
    list.append(item);
  }
  section.replaceChildren(head, list);
}
