// Coalesces items pushed at any rate into one flush per tick: the extension
// posts session events to the webview at most once per frame, in order.

export type Schedule = (fn: () => void) => unknown;

export class Batcher<T> {
  private pending: T[] = [];
  private scheduled = false;

  constructor(
    private readonly flushTo: (items: T[]) => void,
    private readonly schedule: Schedule = (fn) => setTimeout(fn, 16),
  ) {}

  push(...items: T[]): void {
    this.pending.push(...items);
    if (!this.scheduled) {
      this.scheduled = true;
      this.schedule(() => this.flush());
    }
  }

  /** Deliver what is pending now (also used before a reset, to keep order). */
  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) {
      return;
    }
    const items = this.pending;
    this.pending = [];
    this.flushTo(items);
  }

  /** Drop what is pending (the view is being reset anyway). */
  clear(): void {
    this.pending = [];
  }

  get size(): number {
    return this.pending.length;
  }
}
