// What the panel shows, shared by its regions: the session's transcript (the
// shared reducer's state) and what the extension said about it.

import type { WhileRunning } from '../input';
import type { PermissionCard } from '../permissionCard';
import type { RevertOutcome } from '../protocol';
import { Transcript, createTranscript } from '../transcript';

export const view = {
  state: createTranscript() as Transcript,
  /** Outcomes of "Revert this turn" by turn (what the server answered). */
  reverts: {} as Record<number, RevertOutcome>,
  /** Workspace folders, to show the logged reverts' absolute paths relative. */
  roots: [] as string[],
  whileRunning: 'queue' as WhileRunning,
  /** Set while the session is open in another window: why it is read-only here. */
  readOnly: null as string | null,
  /** The permission question waiting for the user, if any. */
  permission: null as PermissionCard | null,
  /** The server's state (the extension's 'server' message): the header says "no server" while none runs. */
  server: 'starting' as 'starting' | 'running' | 'failed' | 'stopped',
  /** The model the server says the next turn uses (agent/model/info), before any turn shows one. */
  serverModel: null as { label: string; demo: boolean; detail: string } | null,
};
