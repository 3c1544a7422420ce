// The server's permission questions (agent/permission), asked inside the panel
// as a card with only the answers the server honours, instead of a modal
// dialog: the user can read the transcript, and type, while it waits. The
// questions wait here, oldest first; the panel draws the first (`card`) and
// posts the answer back. "Waiting for you" is a state of its own (the panel
// header, the status bar) while one waits.

import * as vscode from 'vscode';
import { PermissionAnswer, PermissionParams } from './protocol';
import { permissionQuestion } from './permissionQuestion';

export const ANSWER_LABELS: Record<PermissionAnswer, string> = {
  once: 'Allow once',
  session: 'Allow for this session',
  always: 'Always allow',
  deny: 'Deny',
};

/** What the panel draws for the oldest waiting question. */
export interface PermissionCard {
  id: number;
  message: string;
  detail: string;
  /** An edit waiting for approval: its unified diff. */
  diff?: string;
  answers: { answer: PermissionAnswer; label: string }[];
  /** The server always confirms this one (a recursive delete, say): the
   * answer the keyboard lands on is Deny, not an Allow. */
  alwaysConfirmed: boolean;
}

interface Waiting {
  card: PermissionCard;
  resolve: (answer: PermissionAnswer) => void;
  /** Set when the question is asked in several windows (the agent host). */
  permissionId?: string;
}

export class PermissionQuestions implements vscode.Disposable {
  private readonly waiting: Waiting[] = [];
  private nextId = 1;
  private readonly changed = new vscode.EventEmitter<PermissionCard | null>();
  /** Fires with the card to draw (null: none waits). */
  readonly onDidChange = this.changed.event;

  get card(): PermissionCard | null {
    return this.waiting[0]?.card ?? null;
  }

  get isWaiting(): boolean {
    return this.waiting.length > 0;
  }

  ask(params: PermissionParams): Promise<PermissionAnswer> {
    const { message, detail, answers, diff } = permissionQuestion(params);
    const card: PermissionCard = {
      id: this.nextId++,
      message,
      detail,
      diff,
      answers: answers.map((answer) => ({ answer, label: ANSWER_LABELS[answer] })),
      alwaysConfirmed: !!params.asksEveryTime,
    };
    return new Promise((resolve) => {
      this.waiting.push({ card, resolve, permissionId: params.permissionId ?? undefined });
      this.changed.fire(this.card);
    });
  }

  /** The diff of waiting question `id`, if it has one. */
  diffOf(id: number): string | undefined {
    return this.waiting.find((w) => w.card.id === id)?.card.diff;
  }

  /** The answer to question `id`; one it does not offer denies. */
  answer(id: number, answer: PermissionAnswer): void {
    const index = this.waiting.findIndex((w) => w.card.id === id);
    if (index < 0) {
      return;
    }
    const [w] = this.waiting.splice(index, 1);
    w.resolve(w.card.answers.some((a) => a.answer === answer) ? answer : 'deny');
    this.changed.fire(this.card);
  }

  /** The question was answered in another window (agent/permission/answered):
   * its card goes away; whether it was waiting here. */
  settle(permissionId: string): boolean {
    const index = this.waiting.findIndex((w) => w.permissionId === permissionId);
    if (index < 0) {
      return false;
    }
    const [w] = this.waiting.splice(index, 1);
    w.resolve('deny'); // the server has its answer already and ignores this one
    this.changed.fire(this.card);
    return true;
  }

  /** The server is gone: nothing will read the answers. */
  clear(): void {
    for (const w of this.waiting.splice(0)) {
      w.resolve('deny');
    }
    this.changed.fire(null);
  }

  dispose(): void {
    this.clear();
    this.changed.dispose();
  }
}
