// The webview's bridge to the extension and its DOM helpers, shared by every
// region of the panel.

declare function acquireVsCodeApi(): { postMessage(message: unknown): void; getState(): any; setState(state: any): void };

const vscode = acquireVsCodeApi();

export const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

/** A message to the extension (panel.ts's PanelRequest). */
export function post(message: unknown): void {
  vscode.postMessage(message);
}

export function el(tag: string, className?: string, text?: string): HTMLElement {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

export function button(label: string, className: string, onClick: () => void, title?: string): HTMLButtonElement {
  const b = el('button', className, label) as HTMLButtonElement;
  if (title) {
    b.title = title;
    if (className === 'icon') {
      b.setAttribute('aria-label', title); // an icon alone ("×", "✎") says nothing to a screen reader
    }
  }
  b.addEventListener('click', onClick);
  return b;
}
