// The panel's script (runs in the webview): the extension's messages, each
// folded into what the panel shows (view.ts) and drawn by its region: the
// transcript and its cards (transcriptView.ts, cards.ts), the queue
// (queue.ts), the header and status (chrome.ts), the input (inputBox.ts) and
// its "/" menu (slashMenuView.ts), the permission card (permissionCard.ts).

import type { AgentStatus, SessionEvent } from '../protocol';
import { applyEvents, applySubagentStatus, applyToolProgress, loadTranscript } from '../transcript';
import { addImage } from './attachments';
import { $, post } from './dom';
import { forgetImages, imageArrived } from './imageThumbs';
import { attach, input } from './inputBox';
import { focusPermissionCard, renderPermissionCard } from './permissionCard';
import { queueChanged } from './queue';
import { renderReviewSummary } from './reviewSummaryView';
import { setSlashItems } from './slashMenuView';
import { followBottom, reset, scheduleRender } from './transcriptView';
import { view } from './view';

const bannerEl = $('banner');
const contextLabel = $('context-label');
const permissionEl = $('permission');

window.addEventListener('message', (e: MessageEvent) => {
  const message = e.data;
  switch (message?.type) {
    case 'reset':
      view.reverts = message.reverts ?? {};
      view.roots = message.roots ?? [];
      view.readOnly = message.readOnly ?? null;
      forgetImages();
      reset(loadTranscript(message.sessionId, message.events as SessionEvent[], message.status as AgentStatus, message.inbox));
      if (!message.sessionId) {
        view.state.sessionId = null;
      }
      break;
    case 'events': {
      const state = view.state;
      const before = state.inbox.nextTurn.length + state.inbox.nextStep.length;
      applyEvents(state, message.events);
      if (before !== state.inbox.nextTurn.length + state.inbox.nextStep.length || message.events.some((ev: SessionEvent) => ev.type === 'agent/inbox/spliced' || ev.type === 'agent/inbox/paused')) {
        queueChanged();
      }
      scheduleRender();
      break;
    }
    case 'status':
      view.state.status = message.status;
      scheduleRender();
      break;
    case 'reverted':
      view.reverts[message.turn] = message.outcome;
      for (const item of view.state.items) {
        if (item.kind === 'turn-end' && item.turn === message.turn) {
          item.rev = ++view.state.rev; // redraw its footer
        }
      }
      scheduleRender();
      break;
    case 'progress':
      applyToolProgress(view.state, message.callId, message.data);
      scheduleRender();
      break;
    case 'subagent':
      applySubagentStatus(view.state, message.params);
      scheduleRender();
      break;
    case 'prefs':
      view.whileRunning = message.whileRunning;
      attach.checked = message.attach;
      scheduleRender();
      break;
    case 'context':
      contextLabel.textContent = message.label ? `Attach ${message.label}` : 'No active editor to attach';
      break;
    case 'server': {
      view.server = message.state;
      scheduleRender();
      bannerEl.hidden = message.state === 'running';
      bannerEl.className = message.state;
      bannerEl.textContent = message.message ?? (message.state === 'starting' ? 'Starting the agent server…' : 'The agent server is not running.');
      if (message.restart && message.state !== 'running' && message.state !== 'starting') {
        const restart = document.createElement('button');
        restart.className = 'banner-action';
        restart.textContent = message.restart;
        restart.addEventListener('click', () => post({ type: 'restartServer' }));
        bannerEl.append(' ', restart);
      }
      followBottom();
      break;
    }
    case 'model':
      view.serverModel = { label: message.label, demo: message.demo, detail: message.detail };
      $('demo-text').textContent = message.detail;
      scheduleRender();
      break;
    case 'insert': {
      const at = input.selectionStart ?? input.value.length;
      input.value = `${input.value.slice(0, at)}${message.text}${input.value.slice(at)}`;
      input.focus();
      break;
    }
    case 'focus':
      input.focus();
      break;
    case 'attachImage':
      addImage(message.image);
      break;
    case 'restoreImages':
      for (const image of message.images) {
        addImage(image);
      }
      break;
    case 'imageData':
      imageArrived(message.file, message.url, message.error);
      scheduleRender();
      break;
    case 'slashItems':
      setSlashItems(message.items, message.loading);
      break;
    case 'review':
      renderReviewSummary($('review-summary'), message.headline, message.files);
      break;
    case 'permission':
      view.permission = message.card ?? null;
      renderPermissionCard(permissionEl, view.permission, (id, answer) => post({ type: 'answerPermission', id, answer }),
        (id) => post({ type: 'showPermissionDiff', id }));
      scheduleRender();
      break;
  }
});

// Alt+P reaches the permission card from anywhere in the panel (the card
// itself never takes the focus).
document.addEventListener('keydown', (e) => {
  if (e.altKey && !e.ctrlKey && !e.metaKey && e.code === 'KeyP' && focusPermissionCard(permissionEl)) {
    e.preventDefault();
    e.stopPropagation();
  }
});

post({ type: 'ready' });
