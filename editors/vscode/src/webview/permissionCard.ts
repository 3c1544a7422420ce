// The permission card of the panel (runs in the webview): the oldest waiting
// question with a button per answer the server honours. Keyboard first: the
// first answer takes the focus when the card appears while the panel has it,
// Tab moves between the answers, Enter or Space picks one, Escape denies.

import type { PermissionCard } from '../permissionCard';
import type { PermissionAnswer } from '../protocol';

export function renderPermissionCard(
  section: HTMLElement,
  card: PermissionCard | null,
  answer: (id: number, answer: PermissionAnswer) => void,
): void {
  section.hidden = !card;
  if (!card) {
    section.replaceChildren();
    return;
  }
  if (section.dataset.id === String(card.id)) {
    return; // drawn already: keep the focus where it is
  }
  section.dataset.id = String(card.id);
  const title = document.createElement('div');
  title.className = 'permission-title';
  title.id = `permission-title-${card.id}`;
  title.textContent = card.message;
  const detail = document.createElement('div');
  detail.className = 'permission-detail';
  detail.textContent = card.detail;
  const row = document.createElement('div');
  row.className = 'permission-answers';
  for (const { answer: value, label } of card.answers) {
    const b = document.createElement('button');
    b.className = value === 'deny' ? 'permission-answer deny' : 'permission-answer';
    b.textContent = label;
    b.dataset.answer = value;
    b.addEventListener('click', () => answer(card.id, value));
    row.append(b);
  }
  section.setAttribute('role', 'alertdialog');
  section.setAttribute('aria-labelledby', title.id);
  section.onkeydown = (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation(); // not the panel's "Escape stops the turn"
      answer(card.id, 'deny');
    }
  };
  section.replaceChildren(title, detail, row);
  if (document.hasFocus()) {
    row.querySelector('button')?.focus();
  }
}

/** The answers the card shows now (for the render report). */
export function cardLabels(section: HTMLElement): string[] {
  return section.hidden ? [] : [...section.querySelectorAll('button')].map((b) => b.textContent ?? '');
}
