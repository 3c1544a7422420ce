// The permission card of the panel (runs in the webview): the oldest waiting
// question with a button per answer the server honours. It never takes the
// keyboard focus (the user may be typing the next message): it is announced
// (an alertdialog in a live region) and reached with Alt+P, which lands on
// "Allow once", or on Deny when the server always confirms the command.
// For a moment after it appears it ignores every key and click, so a key
// meant for something else never answers it. Tab moves between the answers,
// Enter or Space picks one, Escape denies.

import type { PermissionCard } from '../permissionCard';
import type { PermissionAnswer } from '../protocol';

/** How long a new card ignores keys and clicks. */
export const ARM_MS = 500;

let shownAt = 0;
let armTimer: ReturnType<typeof setTimeout> | undefined;

function armed(): boolean {
  return performance.now() - shownAt >= ARM_MS;
}

export function renderPermissionCard(
  section: HTMLElement,
  card: PermissionCard | null,
  answer: (id: number, answer: PermissionAnswer) => void,
  openDiff?: (id: number) => void,
): void {
  section.hidden = !card;
  if (!card) {
    section.replaceChildren();
    delete section.dataset.id;
    delete section.dataset.armed;
    return;
  }
  if (section.dataset.id === String(card.id)) {
    return; // drawn already: keep the focus where it is
  }
  const hadFocus = section.contains(document.activeElement);
  section.dataset.id = String(card.id);
  delete section.dataset.armed;
  shownAt = performance.now();
  clearTimeout(armTimer);
  armTimer = setTimeout(() => (section.dataset.armed = ''), ARM_MS);
  const title = document.createElement('div');
  title.className = 'permission-title';
  title.id = `permission-title-${card.id}`;
  title.textContent = card.message;
  const detail = document.createElement('div');
  detail.className = 'permission-detail';
  detail.id = `permission-detail-${card.id}`;
  detail.textContent = card.detail;
  const diff = card.diff ? diffBlock(card.diff) : null;
  if (diff && openDiff) {
    const open = document.createElement('button');
    open.className = 'link permission-open-diff';
    open.textContent = 'Open in diff editor';
    open.addEventListener('click', () => openDiff(card.id));
    diff.append(open);
  }
  const row = document.createElement('div');
  row.className = 'permission-answers';
  const fallback = card.alwaysConfirmed ? 'deny' : card.answers[0]?.answer;
  for (const { answer: value, label } of card.answers) {
    const b = document.createElement('button');
    b.className = value === 'deny' ? 'permission-answer deny' : 'permission-answer';
    b.textContent = label;
    b.dataset.answer = value;
    if (value === fallback) {
      b.dataset.default = '';
    }
    b.addEventListener('click', () => {
      if (armed()) {
        answer(card.id, value);
      }
    });
    row.append(b);
  }
  const hint = document.createElement('div');
  hint.className = 'permission-hint';
  hint.textContent = 'Alt+P to answer from the keyboard · Esc denies';
  section.setAttribute('role', 'alertdialog');
  section.setAttribute('aria-live', 'assertive');
  section.setAttribute('aria-labelledby', title.id);
  section.setAttribute('aria-describedby', detail.id);
  section.onkeydown = (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation(); // not the panel's "Escape stops the turn"
      answer(card.id, 'deny');
    } else if (!armed()) {
      e.preventDefault(); // a key meant for something else: it answers nothing
      e.stopPropagation();
    }
  };
  section.replaceChildren(...[title, detail, diff, row, hint].filter((n): n is HTMLDivElement => !!n));
  if (hadFocus) {
    // The user was answering the previous card from the keyboard: stay in
    // this one, on its safe answer.
    focusPermissionCard(section);
  }
}

/** An edit's unified diff, each line coloured as added, removed or a hunk header. */
function diffBlock(diff: string): HTMLDivElement {
  const block = document.createElement('div');
  block.className = 'permission-diff';
  const pre = document.createElement('pre');
  for (const line of diff.replace(/\n$/, '').split('\n')) {
    const span = document.createElement('span');
    span.className = line.startsWith('+++') || line.startsWith('---') ? 'diff-file'
      : line.startsWith('+') ? 'diff-add' : line.startsWith('-') ? 'diff-del' : line.startsWith('@@') ? 'diff-hunk' : '';
    span.textContent = `${line}\n`;
    pre.append(span);
  }
  block.append(pre);
  return block;
}

/** Alt+P: move the focus to the card's default answer. False when no card waits. */
export function focusPermissionCard(section: HTMLElement): boolean {
  const target = section.hidden ? null : section.querySelector<HTMLButtonElement>('button[data-default]') ?? section.querySelector<HTMLButtonElement>('.permission-answers button');
  target?.focus();
  return !!target;
}

/** The answers the card shows now (for the render report). */
export function cardLabels(section: HTMLElement): string[] {
  return section.hidden ? [] : [...section.querySelectorAll('.permission-answers button')].map((b) => b.textContent ?? '');
}
