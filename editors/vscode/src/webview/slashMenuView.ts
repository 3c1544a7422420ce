// The input's "/" menu: the panel's commands, the workspace's skills and the
// MCP servers' prompts that fit what is typed after "/", picked with the keys
// or the mouse (Enter runs, Tab completes, Esc closes).

import { SlashItem, argumentHint, filterSlash, menuKey, moveSelection, slashItems, slashQuery } from '../slashMenu';
import { $, el, post } from './dom';
import { view } from './view';

const input = $<HTMLTextAreaElement>('input');
const slashMenu = $('slash-menu');
/** What the "/" menu offers: the panel's commands until the extension lists skills and prompts. */
let slashList: SlashItem[] = slashItems([], []);
let slashLoading = false;
/** The open menu: the items that fit what is typed, and the highlighted one. */
let menu: { items: SlashItem[]; index: number } | null = null;
/** The input's text when Esc closed the menu: it stays closed until the text changes. */
let menuDismissedFor: string | null = null;

/** The extension listed what the menu offers (`loading`: skills and prompts are still being listed). */
export function setSlashItems(items: SlashItem[], loading: boolean): void {
  slashList = items;
  slashLoading = loading;
  if (menu) {
    updateMenu();
  }
}

/** Whether `/name` is something the menu offers (else the line is sent as a message). */
export function isSlashItem(name: string): boolean {
  return slashList.some((item) => item.name === name);
}

const SLASH_KIND: Record<SlashItem['kind'], string> = { command: 'command', skill: 'skill', prompt: 'MCP prompt' };

export function runSlash(name: string, rest: string, text: string): void {
  post({ type: 'slash', name, rest, text });
  input.value = '';
  closeMenu();
}

/** Open, refilter or close the menu for what the input holds now. */
export function updateMenu(): void {
  const query = view.readOnly ? null : slashQuery(input.value, input.selectionStart ?? 0);
  if (query === null || input.value === menuDismissedFor) {
    closeMenu();
    return;
  }
  menuDismissedFor = null;
  if (!menu) {
    post({ type: 'slashItems' }); // skills and prompts change: listed again each time it opens
  }
  const items = filterSlash(slashList, query);
  const highlighted = menu?.items[menu.index]?.name;
  menu = { items, index: Math.max(0, items.findIndex((i) => i.name === highlighted)) };
  renderMenu();
}

export function closeMenu(): void {
  menu = null;
  renderMenu();
}

function renderMenu(): void {
  slashMenu.hidden = !menu;
  input.removeAttribute('aria-activedescendant');
  if (!menu) {
    slashMenu.replaceChildren();
    return;
  }
  const rows = menu.items.map((item, i) => {
    const row = el('div', `slash-item${i === menu!.index ? ' selected' : ''}`);
    row.id = `slash-${i}`;
    row.setAttribute('role', 'option');
    row.setAttribute('aria-selected', String(i === menu!.index));
    row.append(el('span', 'slash-name', `/${item.name}`), el('span', 'slash-args', argumentHint(item)), el('span', 'slash-kind', SLASH_KIND[item.kind]), el('span', 'slash-description', item.description));
    row.addEventListener('mousedown', (e) => {
      e.preventDefault(); // the input keeps the focus
      pickSlash(i, 'run');
    });
    return row;
  });
  if (slashLoading) {
    rows.push(el('div', 'slash-note', 'Listing skills and MCP prompts…'));
  } else if (!rows.length) {
    rows.push(el('div', 'slash-note', 'No command or prompt fits: Enter sends the text as a message.'));
  }
  slashMenu.replaceChildren(...rows);
  if (menu.items.length) {
    input.setAttribute('aria-activedescendant', `slash-${menu.index}`);
    rows[menu.index].scrollIntoView({ block: 'nearest' });
  }
}

/** Enter: run the item (a prompt asks for its arguments); Tab: write `/name ` into the input to type them. */
function pickSlash(index: number, how: 'run' | 'complete'): void {
  const item = menu?.items[index];
  if (!item) {
    return;
  }
  if (how === 'run') {
    runSlash(item.name, '', `/${item.name}`);
  } else {
    input.value = `/${item.name} `;
    input.setSelectionRange(input.value.length, input.value.length);
    closeMenu();
  }
}

/** The menu's keys, while it is open; true when the key was the menu's. */
export function menuKeydown(e: KeyboardEvent): boolean {
  const key = menu ? menuKey(e) : null;
  if (!menu || !key || (key !== 'close' && !menu.items.length)) {
    return false; // an empty menu leaves Enter to send the text
  }
  e.preventDefault();
  if (key === 'close') {
    menuDismissedFor = input.value;
    closeMenu();
  } else if (key === 'up' || key === 'down') {
    menu.index = moveSelection(menu.index, menu.items.length, key);
    renderMenu();
  } else {
    pickSlash(menu.index, key === 'run' ? 'run' : 'complete');
  }
  return true;
}
