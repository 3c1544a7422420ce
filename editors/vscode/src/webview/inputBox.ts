// The input: Enter sends (or runs a "/" line), the alternate key queues or
// steers the other way, Esc cancels the running turn, and the buttons and
// switches around the input say what the user chose.

import { WhileRunning, chooseSendAction, keyAction } from '../input';
import { parseSlashLine } from '../slashMenu';
import { hasImages, listen as listenForImages, takeImages } from './attachments';
import { renderChrome } from './chrome';
import { $, post } from './dom';
import { closeMenu, isSlashItem, menuKeydown, runSlash, updateMenu } from './slashMenuView';
import { view } from './view';

export const input = $<HTMLTextAreaElement>('input');
const sendButton = $<HTMLButtonElement>('send');
const cancelButton = $<HTMLButtonElement>('cancel');
const modeEl = $('mode');
export const attach = $<HTMLInputElement>('attach');
const planMode = $<HTMLInputElement>('plan-mode');
const modelButton = $<HTMLButtonElement>('model');

function send(alternate: boolean): void {
  if (view.readOnly) {
    post({ type: 'newSession' }); // the typed text stays, to send in the new session
    return;
  }
  const text = input.value.trim();
  if (!text && !hasImages()) {
    return;
  }
  const line = parseSlashLine(text);
  if (line && isSlashItem(line.name) && !hasImages()) {
    runSlash(line.name, line.rest, text);
    return;
  }
  // Decided here, where the user sees the Send/Queue/Steer label.
  post({ type: 'send', text, action: chooseSendAction(view.state.status, view.whileRunning, alternate), images: takeImages() });
  input.value = '';
}

listenForImages(input, $('composer'));
input.addEventListener('input', updateMenu);
input.addEventListener('click', updateMenu);
input.addEventListener('blur', closeMenu);
input.addEventListener('keyup', (e) => {
  if (e.key === 'ArrowLeft' || e.key === 'ArrowRight' || e.key === 'Home' || e.key === 'End') {
    updateMenu(); // the caret left the slash word
  }
});

input.addEventListener('keydown', (e) => {
  if (menuKeydown(e)) {
    e.stopPropagation(); // Esc closes the menu, it does not stop the turn
    return;
  }
  const action = keyAction(e);
  if (action === 'send' || action === 'send-alternate') {
    e.preventDefault();
    send(action === 'send-alternate');
  } else if (action === 'cancel' && view.state.status === 'running' && !view.readOnly) {
    e.preventDefault();
    post({ type: 'cancel' });
  }
});
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && e.target !== input && view.state.status === 'running' && !view.readOnly) {
    post({ type: 'cancel' });
  }
});
sendButton.addEventListener('click', () => send(false));
$('readonly-new').addEventListener('click', () => post({ type: 'newSession' }));
cancelButton.addEventListener('click', () => post({ type: 'cancel' }));
attach.addEventListener('change', () => post({ type: 'toggleAttach', on: attach.checked }));
planMode.addEventListener('change', () => post({ type: 'setPlanMode', on: planMode.checked }));
modelButton.addEventListener('click', () => post({ type: 'pickModel' }));
$('mention').addEventListener('click', () => post({ type: 'pickFile' }));
$('setup-model').addEventListener('click', () => post({ type: 'setupModel' }));
for (const radio of modeEl.querySelectorAll<HTMLInputElement>('input')) {
  radio.addEventListener('change', () => {
    if (radio.checked) {
      view.whileRunning = radio.value as WhileRunning;
      post({ type: 'setWhileRunning', mode: view.whileRunning });
      renderChrome();
    }
  });
}
