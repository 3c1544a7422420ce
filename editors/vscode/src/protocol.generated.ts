// GENERATED from docs/protocol.schema.json by scripts/gen_protocol.mjs: do not edit.
// The server generates that schema from its models (python -m agent_lsp.lsp.protocol_gen --schema).
/* eslint-disable */

/** the version of this protocol */
export const PROTOCOL_VERSION = 1;

/** JSON-RPC error: the session's file is damaged (nothing readable, or a change asked of it); data {sessionId, file, line} */
export const SESSION_DAMAGED_CODE = -32012;

/** JSON-RPC error: the session is open in another agent-lsp process; data {sessionId, pid} */
export const SESSION_IN_USE_CODE = -32010;

/** Every method of the protocol, by its wire name. */
export const METHODS = {
  'agent/cancel': 'agent/cancel',
  'agent/elicit': 'agent/elicit',
  'agent/error': 'agent/error',
  'agent/followup': 'agent/followup',
  'agent/inbox/changed': 'agent/inbox/changed',
  'agent/inbox/claimed': 'agent/inbox/claimed',
  'agent/inbox/discarded': 'agent/inbox/discarded',
  'agent/inbox/inserted': 'agent/inbox/inserted',
  'agent/inbox/move': 'agent/inbox/move',
  'agent/inbox/pause': 'agent/inbox/pause',
  'agent/inbox/remove': 'agent/inbox/remove',
  'agent/inbox/update': 'agent/inbox/update',
  'agent/language/status': 'agent/language/status',
  'agent/languageQuery': 'agent/languageQuery',
  'agent/mcp/authorize': 'agent/mcp/authorize',
  'agent/mcp/list': 'agent/mcp/list',
  'agent/mcp/logout': 'agent/mcp/logout',
  'agent/mcp/prompt/run': 'agent/mcp/prompt/run',
  'agent/mcp/prompts': 'agent/mcp/prompts',
  'agent/model/check': 'agent/model/check',
  'agent/model/info': 'agent/model/info',
  'agent/model/list': 'agent/model/list',
  'agent/permission': 'agent/permission',
  'agent/permission/answered': 'agent/permission/answered',
  'agent/permission/revoke': 'agent/permission/revoke',
  'agent/permission/rules': 'agent/permission/rules',
  'agent/review/list': 'agent/review/list',
  'agent/review/resolve': 'agent/review/resolve',
  'agent/saveDocuments': 'agent/saveDocuments',
  'agent/session/compact': 'agent/session/compact',
  'agent/session/delete': 'agent/session/delete',
  'agent/session/export': 'agent/session/export',
  'agent/session/file': 'agent/session/file',
  'agent/session/fork': 'agent/session/fork',
  'agent/session/list': 'agent/session/list',
  'agent/session/load': 'agent/session/load',
  'agent/session/mode': 'agent/session/mode',
  'agent/session/new': 'agent/session/new',
  'agent/session/presence': 'agent/session/presence',
  'agent/session/rename': 'agent/session/rename',
  'agent/session/replay': 'agent/session/replay',
  'agent/session/rewind': 'agent/session/rewind',
  'agent/session/setModel': 'agent/session/setModel',
  'agent/skill/list': 'agent/skill/list',
  'agent/skill/run': 'agent/skill/run',
  'agent/status': 'agent/status',
  'agent/steer': 'agent/steer',
  'agent/subagent/cancel': 'agent/subagent/cancel',
  'agent/subagent/status': 'agent/subagent/status',
  'agent/tool/progress': 'agent/tool/progress',
  'agent/turn/revert': 'agent/turn/revert',
  'session/event': 'session/event'
} as const;

/** Every client -> server request: its params and its result. */
export interface ClientRequests {
  'agent/cancel': { params: CancelParams; result: Empty };
  'agent/followup': { params: FollowupParams; result: MessageRef };
  'agent/inbox/move': { params: InboxMoveParams; result: InboxMoveResult };
  'agent/inbox/pause': { params: InboxPauseParams; result: InboxPauseResult };
  'agent/inbox/remove': { params: InboxRemoveParams; result: InboxRemoveResult };
  'agent/inbox/update': { params: InboxUpdateParams; result: InboxUpdateResult };
  'agent/language/status': { params: LanguageStatusParams; result: LanguageStatusResult };
  'agent/mcp/authorize': { params: McpServerParams; result: McpServerStatus };
  'agent/mcp/list': { params: McpListParams; result: McpListResult };
  'agent/mcp/logout': { params: McpServerParams; result: McpServerStatus };
  'agent/mcp/prompt/run': { params: McpPromptRunParams; result: MessageRef };
  'agent/mcp/prompts': { params: McpPromptsParams; result: McpPromptsResult };
  'agent/model/check': { params: ModelCheckParams; result: ModelCheckResult };
  'agent/model/info': { params: ModelInfoParams; result: ModelInfoResult };
  'agent/model/list': { params: ModelListParams; result: ModelListResult };
  'agent/permission/revoke': { params: PermissionRevokeParams; result: PermissionRulesResult };
  'agent/permission/rules': { params: PermissionRulesParams; result: PermissionRulesResult };
  'agent/review/list': { params: ReviewListParams; result: ReviewListResult };
  'agent/review/resolve': { params: ReviewResolveParams; result: ReviewResolveResult };
  'agent/session/compact': { params: SessionRef; result: SessionCompactResult };
  'agent/session/delete': { params: SessionDeleteParams; result: SessionDeleteResult };
  'agent/session/export': { params: SessionExportParams; result: SessionExportResult };
  'agent/session/file': { params: SessionFileParams; result: SessionFileResult };
  'agent/session/fork': { params: SessionForkParams; result: SessionRef };
  'agent/session/list': { params: SessionListParams; result: SessionListResult };
  'agent/session/load': { params: SessionRef; result: SessionLoadResult };
  'agent/session/mode': { params: SessionModeParams; result: SessionModeResult };
  'agent/session/new': { params: SessionNewParams; result: SessionRef };
  'agent/session/rename': { params: SessionRenameParams; result: SessionRenameResult };
  'agent/session/replay': { params: SessionReplayParams; result: SessionReplayResult };
  'agent/session/rewind': { params: SessionRewindParams; result: SessionRewindResult };
  'agent/session/setModel': { params: SessionSetModelParams; result: SessionSetModelResult };
  'agent/skill/list': { params: SkillListParams; result: SkillListResult };
  'agent/skill/run': { params: SkillRunParams; result: MessageRef };
  'agent/steer': { params: SteerParams; result: MessageRef };
  'agent/subagent/cancel': { params: SubagentCancelParams; result: SubagentCancelResult };
  'agent/turn/revert': { params: TurnRevertParams; result: TurnRevertResult };
}

/** Every server -> client notification: its params. */
export interface ServerNotifications {
  'agent/error': AgentErrorParams;
  'agent/inbox/changed': InboxChangedParams;
  'agent/inbox/claimed': InboxClaimedParams;
  'agent/inbox/discarded': InboxDiscardedParams;
  'agent/inbox/inserted': InboxInsertedParams;
  'agent/permission/answered': PermissionAnsweredParams;
  'agent/session/presence': SessionPresenceParams;
  'agent/status': StatusParams;
  'agent/subagent/status': SubagentStatusParams;
  'agent/tool/progress': ToolProgressParams;
  'session/event': SessionEventParams;
}

/** Every server -> client request: its params and its result. */
export interface ServerRequests {
  'agent/elicit': { params: ElicitParams; result: ElicitResult };
  'agent/languageQuery': { params: LanguageQueryParams; result: LanguageQueryResult };
  'agent/permission': { params: PermissionParams; result: PermissionResult };
  'agent/saveDocuments': { params: SaveDocumentsParams; result: SaveDocumentsResult };
}

/** A client -> server request, typed by its method: the params it takes, the result it answers. */
export type Request = <M extends keyof ClientRequests>(
  method: M,
  params: ClientRequests[M]['params'],
) => Promise<ClientRequests[M]['result']>;

/** `Request` over an untyped JSON-RPC sender (the language client's `sendRequest`). */
export function typedRequest(send: (method: string, params: unknown) => Promise<unknown>): Request {
  return (method, params) => send(method, params) as Promise<any>;
}

export type Event =
  | AgentInboxSplicedEvent
  | TurnStartEvent
  | TurnEndEvent
  | StepStartEvent
  | StepEndEvent
  | UserMessageEvent
  | RequestHeaderEvent
  | RequestContextEvent
  | AssistantChunkEvent
  | AssistantMessageEvent
  | ToolCallEvent
  | ToolResultEvent
  | CompactionPruneEvent
  | CompactionStartEvent
  | CompactionSummaryEvent
  | CompactionEndEvent
  | LlmRetryEvent
  | LlmRetryStartedEvent
  | LlmFallbackEvent
  | SessionEndSeedEvent
  | TurnRevertEvent
  | RevertRecoveredEvent
  | SubagentStartEvent
  | HookRunEvent
  | PlanUpdateEvent
  | SessionModeEvent
  | SessionRewindEvent
  | AgentInboxPausedEvent
  | ReviewPendingEvent
  | ReviewResolveEvent
  | SessionModelEvent
  | SessionTitleEvent;

export interface AgentErrorParams {
  error: LlmFailure;
  sessionId: string;
  step?: number | null;
  turn?: number | null;
  [k: string]: unknown;
}
/**
 * A model failure: one canonical `code` (RATE_LIMIT, OVERLOADED, TIMEOUT,
 * CONTEXT_WINDOW_EXCEEDED, AUTH, MODEL_UNAVAILABLE, ABORTED, UNKNOWN, ...).
 */
export interface LlmFailure {
  code: string;
  message: string;
  model?: string | null;
  /**
   * connect: no connection was made (refused, unknown host)
   */
  phase?: 'connect' | null;
  provider?: string | null;
  providerRetryAfterMs?: number | null;
  requestId?: string | null;
  /**
   * false: the same request again cannot help
   */
  retryable?: boolean | null;
  /**
   * the env var or settings key to change, e.g. OPENAI_BASE_URL, model.baseUrl, model.apiKey
   */
  setting?: string | null;
  status?: number | null;
  /**
   * the endpoint asked
   */
  url?: string | null;
  [k: string]: unknown;
}
/**
 * A durable `agent/inbox/paused` event.
 */
export interface AgentInboxPausedEvent {
  data: InboxPaused;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'agent/inbox/paused';
}
/**
 * The next-turn queue was paused (no turn starts from it) or resumed.
 */
export interface InboxPaused {
  paused: boolean;
  [k: string]: unknown;
}
/**
 * A durable `agent/inbox/spliced` event.
 */
export interface AgentInboxSplicedEvent {
  data: InboxSpliced;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'agent/inbox/spliced';
}
/**
 * A claim is a pure deletion (no `outcome`); removal and clear carry
 * `outcome: "canceled"`; an insertion has no `removedCount`. Queue edits:
 * `outcome: "edited"` replaces a message with its new text, `"moved"`
 * reorders a list or takes a message from one list to the other.
 */
export interface InboxSpliced {
  inserted: Message[];
  outcome?: ('canceled' | 'edited' | 'moved') | null;
  removedCount?: number | null;
  start: number;
  target: 'next-turn' | 'next-step';
  [k: string]: unknown;
}
/**
 * A user-role message (inbox, `user/message`). `delivery` says how it was
 * sent (a followup has none); `context` is what the user attached, verbatim.
 */
export interface Message {
  compactionId?: string | null;
  content: Block[];
  context?:
    | {
        [k: string]: unknown;
      }[]
    | null;
  delivery?: ('steer' | 'inject') | null;
  id: string;
  /**
   * the message's content is for the model, not the user's words: clients show this note instead
   */
  note?: MessageNote | null;
  role?: 'user';
  /**
   * "user" by default; the loop's own: tool, plugin, runtime-context, compaction
   */
  source: string;
  [k: string]: unknown;
}
/**
 * A content block: text, reasoning (`signature`/`redactedData` optional) or
 * tool-call (`id`, `name`, raw JSON `arguments`).
 */
export interface Block {
  arguments?: string | null;
  id?: string | null;
  name?: string | null;
  redactedData?: string | null;
  signature?: string | null;
  text?: string | null;
  type: string;
  [k: string]: unknown;
}
/**
 * What a client shows for a message whose content is meant for the model:
 * `undo` ("↶ you undid a change in stats.py"), `skill` ("/greet" and what the
 * user added).
 */
export interface MessageNote {
  kind: 'undo' | 'skill';
  text: string;
  [k: string]: unknown;
}
/**
 * `initialize.capabilities.experimental.agentLsp`.
 */
export interface AgentLspClientCapabilities {
  /**
   * the client answers agent/elicit (MCP servers' questions)
   */
  elicitation?: boolean;
  events?: boolean;
  /**
   * the client answers agent/languageQuery from its own language servers
   */
  languageQuery?: boolean;
  permissions?: boolean;
  saveDocuments?: boolean;
}
/**
 * The `agentLsp` member of every agent edit's `workspace/applyEdit` params, for
 * a client that declared `saveDocuments` (others may refuse an unknown member).
 */
export interface ApplyEditAgentLsp {
  /**
   * the effective "edits.review" setting of the edited files' folder, however it was set, as the edit was made under it (read once per edit: the server holds or saves the edit by the same mode); "review": the edit waits unsaved for the user, so the client does not save it (the server sends agent/saveDocuments once it is to be saved); the undo of a pending hunk is always "review"
   */
  review: 'apply' | 'review' | 'ask';
}
export interface AssistantChunk {
  chunk:
    | TextStart
    | TextDelta
    | TextEnd
    | ReasoningStart
    | ReasoningDelta
    | ReasoningEnd
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | UsageChunk
    | Finish;
  step: number;
  turn: number;
  [k: string]: unknown;
}
export interface TextStart {
  type: 'text-start';
  [k: string]: unknown;
}
export interface TextDelta {
  text: string;
  type: 'text-delta';
  [k: string]: unknown;
}
export interface TextEnd {
  type: 'text-end';
  [k: string]: unknown;
}
export interface ReasoningStart {
  type: 'reasoning-start';
  [k: string]: unknown;
}
export interface ReasoningDelta {
  text: string;
  type: 'reasoning-delta';
  [k: string]: unknown;
}
export interface ReasoningEnd {
  redactedData?: string | null;
  signature?: string | null;
  type: 'reasoning-end';
  [k: string]: unknown;
}
export interface ToolCallStart {
  id: string;
  name: string;
  type: 'tool-call-start';
  [k: string]: unknown;
}
export interface ToolCallDelta {
  /**
   * a fragment of the call's JSON arguments
   */
  delta: string;
  id: string;
  type: 'tool-call-delta';
  [k: string]: unknown;
}
export interface ToolCallEnd {
  id: string;
  type: 'tool-call-end';
  [k: string]: unknown;
}
export interface UsageChunk {
  type: 'usage';
  usage: Usage;
  [k: string]: unknown;
}
/**
 * cumulative: the last one wins
 */
export interface Usage {
  cacheReadTokens?: number | null;
  cacheWriteTokens?: number | null;
  inputTokens?: number | null;
  outputTokens?: number | null;
  reasoningTokens?: number | null;
  [k: string]: unknown;
}
export interface Finish {
  failure?: LlmFailure | null;
  kind: 'stop' | 'tool-calls' | 'max-tokens' | 'error' | 'aborted';
  type: 'finish';
  [k: string]: unknown;
}
/**
 * A durable `assistant/chunk` event.
 */
export interface AssistantChunkEvent {
  data: AssistantChunk;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'assistant/chunk';
}
export interface AssistantMessage {
  content: Block[];
  model?: string | null;
  provider?: string | null;
  role?: 'assistant';
  [k: string]: unknown;
}
export interface AssistantMessageData {
  /**
   * the prefix kept by a mid-stream cancel
   */
  interrupted?: boolean | null;
  message: AssistantMessage;
  sourceEventSeqs: number[];
  step: number;
  surfaceOp: 'append' | ReplaceOp;
  turn: number;
  usage?: Usage1 | null;
  [k: string]: unknown;
}
/**
 * Positional: the surface nodes from seq `start` to seq `end` become this event.
 */
export interface ReplaceOp {
  end: number;
  kind: 'replace';
  start: number;
  [k: string]: unknown;
}
export interface Usage1 {
  cacheReadTokens?: number | null;
  cacheWriteTokens?: number | null;
  inputTokens?: number | null;
  outputTokens?: number | null;
  reasoningTokens?: number | null;
  [k: string]: unknown;
}
/**
 * A durable `assistant/message` event.
 */
export interface AssistantMessageEvent {
  data: AssistantMessageData;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'assistant/message';
}
export interface CancelParams {
  keepInbox?: boolean;
  sessionId: string;
}
export interface Cause {
  kind: 'user' | 'parent' | 'hook' | 'disposed' | 'legacy';
  /**
   * kind hook only
   */
  reason?: string | null;
  [k: string]: unknown;
}
export interface CompactionEnd {
  compactionId: string;
  error?: CompactionFailure | null;
  turn: number | null;
  [k: string]: unknown;
}
export interface CompactionFailure {
  kind: string;
  message: string;
  [k: string]: unknown;
}
/**
 * A durable `compaction/end` event.
 */
export interface CompactionEndEvent {
  data: CompactionEnd;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'compaction/end';
}
export interface CompactionPrune {
  seq: number;
  tokensAfter: number;
  tokensBefore: number;
  [k: string]: unknown;
}
/**
 * A durable `compaction/prune` event.
 */
export interface CompactionPruneEvent {
  data: CompactionPrune;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'compaction/prune';
}
export interface CompactionStart {
  compactionId: string;
  /**
   * null: manual, between turns
   */
  turn: number | null;
  [k: string]: unknown;
}
/**
 * A durable `compaction/start` event.
 */
export interface CompactionStartEvent {
  data: CompactionStart;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'compaction/start';
}
export interface CompactionSummary {
  compactionId: string;
  maxTokens?: number | null;
  model?: string | null;
  provider?: string | null;
  shadowedRange: number[];
  shadowedSeqs: number[];
  shadowedTokenCount: number;
  summary: string;
  usage?: Usage1 | null;
  [k: string]: unknown;
}
/**
 * A durable `compaction/summary` event.
 */
export interface CompactionSummaryEvent {
  data: CompactionSummary;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'compaction/summary';
}
/**
 * A content block of a user message (the blocks of llm/types.py); `text` for text blocks.
 */
export interface ContentBlock {
  text?: string | null;
  type: string;
  [k: string]: unknown;
}
/**
 * Something the user attached to a message: a file, a selection, a diagnostic,
 * or an MCP server's resource (`@server:uri` in the text, see docs/mcp.md).
 */
export interface ContextItem {
  kind: 'file' | 'selection' | 'diagnostic' | 'mcp-resource';
  /**
   * the diagnostic's message
   */
  message?: string | null;
  /**
   * mcp-resource: why it could not be attached, or that it was cut
   */
  note?: string | null;
  range?: Range | null;
  /**
   * mcp-resource: the MCP server it was read from
   */
  server?: string | null;
  text?: string | null;
  uri: string;
}
export interface Range {
  end: Position;
  start: Position;
}
/**
 * LSP position (zero-based; character in the negotiated encoding, UTF-16 by default).
 */
export interface Position {
  character: number;
  line: number;
}
export interface EditSettings {
  /**
   * how the agent's edits land: "apply" (in the buffer and saved), "review" (in the buffer, unsaved, each hunk kept or undone by the user), "ask" (each edit waits for the user's approval of its diff)
   */
  review?: 'apply' | 'review' | 'ask';
}
/**
 * An MCP server asks the user for input (its `elicitation/create`).
 */
export interface ElicitParams {
  message: string;
  /**
   * a flat JSON Schema object: properties of type string, number, integer, boolean, or enum strings
   */
  requestedSchema: {
    [k: string]: unknown;
  };
  server: string;
  /**
   * the session whose tool call the question belongs to, when known
   */
  sessionId?: string | null;
}
export interface ElicitResult {
  action: 'accept' | 'decline' | 'cancel';
  /**
   * accept: the answers by property name
   */
  content?: {
    [k: string]: unknown;
  } | null;
}
export interface Empty {}
/**
 * A durable `turn/start` event.
 */
export interface TurnStartEvent {
  data: TurnStart;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'turn/start';
}
export interface TurnStart {
  turn: number;
  [k: string]: unknown;
}
/**
 * A durable `turn/end` event.
 */
export interface TurnEndEvent {
  data: TurnEnd;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'turn/end';
}
export interface TurnEnd {
  reason: TurnEndReason;
  /**
   * the session's total up to this turn's end
   */
  sessionUsage?: UsageTotal | null;
  turn: number;
  /**
   * the tokens of this turn's replies and summaries
   */
  usage?: UsageTotal | null;
  [k: string]: unknown;
}
/**
 * completed | max-tokens | blocked (`message`?) | aborted (`reason`) |
 * error (`error`) | interrupted (crash repair).
 */
export interface TurnEndReason {
  error?: LlmFailure | null;
  kind: 'completed' | 'max-tokens' | 'blocked' | 'aborted' | 'error' | 'interrupted';
  message?: string | null;
  reason?: Cause | null;
  [k: string]: unknown;
}
/**
 * Tokens summed over replies (a turn's, a session's), with their cost
 * estimated from the price table. `costUsd` is absent when no reply had a
 * known price; `unpricedModels` names the models whose tokens it leaves out.
 */
export interface UsageTotal {
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /**
   * an estimate, from list prices
   */
  costUsd?: number | null;
  inputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  unpricedModels?: string[] | null;
  [k: string]: unknown;
}
/**
 * A durable `step/start` event.
 */
export interface StepStartEvent {
  data: StepBoundary;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'step/start';
}
export interface StepBoundary {
  step: number;
  turn: number;
  [k: string]: unknown;
}
/**
 * A durable `step/end` event.
 */
export interface StepEndEvent {
  data: StepBoundary;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'step/end';
}
/**
 * A durable `user/message` event.
 */
export interface UserMessageEvent {
  data: UserMessage;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'user/message';
}
/**
 * `turn`/`step` are null for a compaction checkpoint between turns.
 */
export interface UserMessage {
  message: Message;
  sourceEventSeqs?: number[] | null;
  step: number | null;
  surfaceOp: 'append' | ReplaceOp;
  turn: number | null;
  [k: string]: unknown;
}
/**
 * A durable `request/header` event.
 */
export interface RequestHeaderEvent {
  data: RequestHeader;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'request/header';
}
export interface RequestHeader {
  header: RequestHeaderFields;
  reason: 'initial' | 'resume' | 'change';
  [k: string]: unknown;
}
export interface RequestHeaderFields {
  maxTokens?: number | null;
  model: string;
  provider: string;
  system: string;
  temperature?: number | null;
  tools: ToolSpec[];
  /**
   * the folder's part of the fixed prompt (its roots and project instructions), sent as the first message
   */
  workspace?: string | null;
  [k: string]: unknown;
}
export interface ToolSpec {
  description?: string | null;
  inputSchema?: {
    [k: string]: unknown;
  } | null;
  name: string;
  [k: string]: unknown;
}
/**
 * A durable `request/context` event.
 */
export interface RequestContextEvent {
  data: RequestContext;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'request/context';
}
export interface RequestContext {
  contextWindow?: number | null;
  /**
   * the system prompt and the tool schemas of the request, in tokens estimated as characters / 4
   */
  fixedTokens?: number | null;
  model: string;
  provider: string;
  [k: string]: unknown;
}
/**
 * A durable `tool/call` event.
 */
export interface ToolCallEvent {
  data: ToolCall;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'tool/call';
}
export interface ToolCall {
  /**
   * the raw JSON text the model wrote
   */
  arguments: string;
  callId: string;
  name: string;
  step: number;
  turn: number;
  [k: string]: unknown;
}
/**
 * A durable `tool/result` event.
 */
export interface ToolResultEvent {
  data: ToolResult;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'tool/result';
}
export interface ToolResult {
  abandoned?: boolean | null;
  callId: string;
  error?: ToolError | null;
  message: ToolMessage;
  /**
   * for clients only (docs/tools.md)
   */
  meta?: {
    [k: string]: unknown;
  } | null;
  name: string;
  sourceEventSeqs: number[];
  step: number;
  surfaceOp: 'append' | ReplaceOp;
  turn: number;
  [k: string]: unknown;
}
export interface ToolError {
  code: string;
  message: string;
  name?: string | null;
  [k: string]: unknown;
}
export interface ToolMessage {
  callId: string;
  content: Block[];
  isError: boolean;
  name: string;
  role?: 'tool';
  [k: string]: unknown;
}
/**
 * A durable `llm/retry` event.
 */
export interface LlmRetryEvent {
  data: LlmRetry;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'llm/retry';
}
export interface LlmRetry {
  delayMs: number;
  failure: LlmFailure;
  mode: 'normal';
  policy: 'transient';
  provider?: string | null;
  retry: number;
  retryId: string;
  step: number;
  turn: number;
  [k: string]: unknown;
}
/**
 * A durable `llm/retry-started` event.
 */
export interface LlmRetryStartedEvent {
  data: LlmRetryStarted;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'llm/retry-started';
}
export interface LlmRetryStarted {
  retry: number;
  retryId: string;
  step: number;
  turn: number;
  [k: string]: unknown;
}
/**
 * A durable `llm/fallback` event.
 */
export interface LlmFallbackEvent {
  data: LlmFallback;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'llm/fallback';
}
export interface LlmFallback {
  failure: LlmFailure;
  from: Route;
  step: number;
  to: Route;
  turn: number;
  [k: string]: unknown;
}
export interface Route {
  model?: string | null;
  provider?: string | null;
  [k: string]: unknown;
}
/**
 * A durable `session/end-seed` event.
 */
export interface SessionEndSeedEvent {
  data: SessionEndSeed;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'session/end-seed';
}
export interface SessionEndSeed {
  seedLength: number;
  [k: string]: unknown;
}
/**
 * A durable `turn/revert` event.
 */
export interface TurnRevertEvent {
  data: TurnRevert;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'turn/revert';
}
/**
 * Appended by the workspace host when `agent/turn/revert` undid (some of) a turn.
 */
export interface TurnRevert {
  reverted: string[];
  skipped: SkippedPath[];
  turn: number;
  [k: string]: unknown;
}
export interface SkippedPath {
  path: string;
  reason: string;
  [k: string]: unknown;
}
/**
 * A durable `revert/recovered` event.
 */
export interface RevertRecoveredEvent {
  data: RevertRecovered;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'revert/recovered';
}
/**
 * Appended when a file revert a crash interrupted was found at the next start:
 * its files all put back as before it (not recorded: it may be run again), or,
 * all of them being done, its events appended just before this one.
 */
export interface RevertRecovered {
  /**
   * what was done, in words, naming the files
   */
  message: string;
  operation: 'rewind' | 'turn-revert' | 'review-undo';
  outcome: 'rolled-back' | 'completed';
  /**
   * rolled-back: the files put back; completed: the files it reverted
   */
  paths: string[];
  turn: number;
  [k: string]: unknown;
}
/**
 * A durable `subagent/start` event.
 */
export interface SubagentStartEvent {
  data: SubagentStart;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'subagent/start';
}
/**
 * Appended to the parent's log when a `subagent` tool call starts its child
 * session; the call's `tool/result` meta `subagent` says how it ended.
 */
export interface SubagentStart {
  agentType?: string | null;
  callId: string;
  childSessionId: string;
  description: string;
  step: number;
  turn: number;
  [k: string]: unknown;
}
/**
 * A durable `hook/run` event.
 */
export interface HookRunEvent {
  data: HookRun;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'hook/run';
}
/**
 * Appended by the workspace host for every user hook that ran: it allowed, blocked,
 * failed, timed out or could not continue a turn (not model-visible; see docs/capabilities.md).
 */
export interface HookRun {
  command: string;
  /**
   * PreToolUse, PostToolUse, UserPromptSubmit, Stop or SessionStart
   */
  event: string;
  exitCode?: number | null;
  /**
   * the reason it blocked, what went wrong; for an allowed hook, empty
   */
  message: string;
  /**
   * "settings" or the project file the hook came from
   */
  origin: string;
  outcome: 'allowed' | 'blocked' | 'failed' | 'timeout';
  source: 'user' | 'project';
  [k: string]: unknown;
}
/**
 * A durable `plan/update` event.
 */
export interface PlanUpdateEvent {
  data: PlanUpdate;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'plan/update';
}
/**
 * The session's plan as the model last wrote it (`todo_write`): the whole list.
 */
export interface PlanUpdate {
  callId: string;
  items: PlanItem[];
  step: number;
  turn: number;
  [k: string]: unknown;
}
export interface PlanItem {
  content: string;
  priority?: ('high' | 'medium' | 'low') | null;
  status: 'pending' | 'in_progress' | 'completed';
  [k: string]: unknown;
}
/**
 * A durable `session/mode` event.
 */
export interface SessionModeEvent {
  data: SessionMode;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'session/mode';
}
/**
 * The session's permission mode changed (`agent/session/mode`).
 */
export interface SessionMode {
  /**
   * leaving plan mode: the plan was queued for the next turn
   */
  carriedPlan?: boolean | null;
  mode: 'default' | 'plan';
  previous: 'default' | 'plan';
  [k: string]: unknown;
}
/**
 * A durable `session/rewind` event.
 */
export interface SessionRewindEvent {
  data: SessionRewind;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'session/rewind';
}
/**
 * The history was cut back to before `turn` (`agent/session/rewind`):
 * the surface nodes `removedSeqs` became this node, which has no message.
 */
export interface SessionRewind {
  removedSeqs: number[];
  surfaceOp: 'append' | ReplaceOp;
  turn: number;
  [k: string]: unknown;
}
/**
 * A durable `review/pending` event.
 */
export interface ReviewPendingEvent {
  data: ReviewPending;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'review/pending';
}
/**
 * An edit landed unsaved and its hunks wait for the user ("edits.review": "review");
 * `afterSha` and each hunk's place find it again after a restart.
 */
export interface ReviewPending {
  /**
   * sha256 of the file's text right after the change
   */
  afterSha?: string | null;
  callId: string;
  hunks: ReviewHunk[];
  path: string;
  turn: number;
  [k: string]: unknown;
}
export interface ReviewHunk {
  /**
   * review/pending: the line the new lines start at, right after the change
   */
  at?: number | null;
  callId: string;
  /**
   * review/pending: up to 3 lines after them then
   */
  contextAfter?: string | null;
  /**
   * review/pending: up to 3 lines before them then
   */
  contextBefore?: string | null;
  /**
   * "<callId>.<n>", unique in the session
   */
  hunkId: string;
  /**
   * the whole lines it put there
   */
  newText: string;
  /**
   * the whole lines the change replaced
   */
  oldText: string;
  turn: number;
  [k: string]: unknown;
}
/**
 * A durable `review/resolve` event.
 */
export interface ReviewResolveEvent {
  data: ReviewResolve;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'review/resolve';
}
/**
 * The user kept or undid pending hunks (`agent/review/resolve`); an undo's
 * `diff` is the rejected change, as the model was told.
 */
export interface ReviewResolve {
  action: 'keep' | 'undo';
  diff?: string | null;
  hunks: ReviewHunk[];
  path: string;
  [k: string]: unknown;
}
/**
 * A durable `session/model` event.
 */
export interface SessionModelEvent {
  data: SessionModel;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'session/model';
}
/**
 * The session switched model (`agent/session/setModel`): requests from the
 * next step on go to `provider`'s `model`, with `effort` when set.
 */
export interface SessionModel {
  effort?: string | null;
  model: string;
  previousModel: string;
  previousProvider: string;
  provider: string;
  [k: string]: unknown;
}
/**
 * A durable `session/title` event.
 */
export interface SessionTitleEvent {
  data: SessionTitle;
  /**
   * a coalesced assistant/chunk: it covers seq..lastSeq
   */
  lastSeq?: number | null;
  seq: number;
  /**
   * epoch milliseconds
   */
  time: number;
  type: 'session/title';
}
/**
 * The session's title from now on (the listing's `title`): one the model
 * wrote after the first turn (`sessions.titles = "model"`) or the user's
 * (`agent/session/rename`). Not model-visible.
 */
export interface SessionTitle {
  /**
   * source model: the model that wrote it
   */
  model?: string | null;
  source: 'model' | 'user';
  title: string;
  /**
   * source model: the tokens of the title request
   */
  usage?: Usage1 | null;
  [k: string]: unknown;
}
/**
 * A second model to use when the primary one is unavailable. Unset
 * fields inherit the primary's (its key comes from the same env vars).
 */
export interface FallbackSettings {
  baseUrl?: string | null;
  model?: string | null;
  provider?: ('openai' | 'anthropic' | 'scripted') | null;
}
export interface FileDiagnostics {
  /**
   * LSP Diagnostic objects
   */
  diagnostics: {
    [k: string]: unknown;
  }[];
  uri: string;
}
/**
 * The object form of the `agentLsp.followup` / `agentLsp.steer` command argument.
 */
export interface FollowupCommandArgs {
  content: string | (ImageBlock | ContentBlock)[];
  context?: ContextItem[] | null;
  sessionId?: string | null;
  workspaceUri?: string | null;
}
/**
 * An image the user sends: its bytes (`data`, base64) or a file inside the workspace
 * (`uri`, a file URI or a path relative to the folder). PNG, JPEG, GIF or WebP, known
 * from the bytes; at most 5 MB. Stored once beside the session log: the session's
 * events hold `{type: "image", mediaType, file, name?, size}` instead (docs/protocol.md).
 */
export interface ImageBlock {
  /**
   * the image's bytes, base64
   */
  data?: string | null;
  /**
   * instead of data: an image the session keeps (the `file` of a reference its events hold), to send a message of the transcript again
   */
  file?: string | null;
  /**
   * what the client believes it is (the bytes decide)
   */
  mediaType?: string | null;
  /**
   * the file name to show
   */
  name?: string | null;
  type: 'image';
  /**
   * instead of data: a file inside the workspace
   */
  uri?: string | null;
}
export interface FollowupParams {
  content: string | (ImageBlock | ContentBlock)[];
  context?: ContextItem[] | null;
  /**
   * no sessionId: a new session in workspaceUri's folder (or the first folder)
   */
  sessionId?: string | null;
  workspaceUri?: string | null;
}
export interface Inbox {
  nextStep: Message[];
  nextTurn: Message[];
}
export interface InboxChangedParams {
  nextStep: Message[];
  nextTurn: Message[];
  paused: boolean;
  sessionId: string;
  [k: string]: unknown;
}
export interface InboxClaimedParams {
  message: Message;
  sessionId: string;
  turn: number;
  [k: string]: unknown;
}
export interface InboxDiscardedParams {
  message: Message;
  sessionId: string;
  target: 'next-turn' | 'next-step';
  [k: string]: unknown;
}
export interface InboxInsertedParams {
  message: Message;
  sessionId: string;
  target: 'next-turn' | 'next-step';
  [k: string]: unknown;
}
export interface InboxMoveParams {
  /**
   * position in the next-turn queue; default: its end
   */
  index?: number | null;
  messageId: string;
  sessionId: string;
  /**
   * next-turn: the queue (at `index`); next-step: steer the running turn now; now: cancel the running turn and start this message's turn
   */
  to: 'next-turn' | 'next-step' | 'now';
}
export interface InboxMoveResult {
  moved: boolean;
}
export interface InboxPauseParams {
  paused: boolean;
  sessionId: string;
}
export interface InboxPauseResult {
  paused: boolean;
}
export interface InboxRemoveParams {
  messageId: string;
  sessionId: string;
}
export interface InboxRemoveResult {
  removed: boolean;
}
export interface InboxUpdateParams {
  content: string | (ImageBlock | ContentBlock)[];
  messageId: string;
  sessionId: string;
}
export interface InboxUpdateResult {
  updated: boolean;
}
/**
 * Server -> client: ask the editor's own language servers for this document (never agent_lsp itself).
 */
export interface LanguageQueryParams {
  /**
   * diagnostics: every file the editor has diagnostics for, besides textDocument
   */
  everywhere?: boolean;
  kind:
    | 'diagnostics'
    | 'definition'
    | 'references'
    | 'hover'
    | 'documentSymbols'
    | 'workspaceSymbols'
    | 'rename'
    | 'codeActions';
  newName?: string | null;
  /**
   * definition, references, hover, rename
   */
  position?: Position | null;
  query?: string | null;
  /**
   * codeActions: the lines to fix
   */
  range?: Range | null;
  /**
   * absent for workspaceSymbols, and for diagnostics of every file
   */
  textDocument?: QueriedDocument | null;
  /**
   * how long the client may wait for its servers
   */
  timeoutMs: number;
}
export interface QueriedDocument {
  uri: string;
  /**
   * the buffer version the answer must be for: the client waits (up to timeoutMs) until its language servers have reported on it; null: the document is not open in the editor (open it unseen)
   */
  version?: number | null;
}
export interface LanguageQueryResult {
  /**
   * codeActions: LSP CodeAction objects with their edit
   */
  actions?:
    | {
        [k: string]: unknown;
      }[]
    | null;
  /**
   * diagnostics with everywhere: the URIs of the other documents the servers checked in full for this answer (one of them absent from files has no problems); absent: the client does not say
   */
  checked?: string[] | null;
  /**
   * rename: an LSP WorkspaceEdit
   */
  edit?: {
    [k: string]: unknown;
  } | null;
  files?: FileDiagnostics[] | null;
  /**
   * the hover's text (markdown or plain)
   */
  hover?: string | null;
  /**
   * LSP Location or LocationLink objects
   */
  locations?:
    | {
        [k: string]: unknown;
      }[]
    | null;
  /**
   * diagnostics: the servers had not reported on the version within timeoutMs
   */
  pending?: boolean;
  /**
   * the language servers that answered; empty: the editor has none for this document, and the agent asks its own
   */
  servers: string[];
  /**
   * LSP DocumentSymbol or SymbolInformation
   */
  symbols?:
    | {
        [k: string]: unknown;
      }[]
    | null;
}
/**
 * A language server the agent may run itself for a folder, and whether it does.
 */
export interface LanguageServerStatus {
  /**
   * the command line, as configured
   */
  command: string;
  filetypes: string[];
  name: string;
  /**
   * why, in words
   */
  reason: string;
  /**
   * where the server runs, for one used: "sandboxed, no network", "sandboxed, with network (why)", "not sandboxed: why" or "not started: why" (the sandbox of the agent's commands, docs/sandbox.md)
   */
  sandbox?: string | null;
  source: 'built-in' | 'settings';
  /**
   * "found": used, starts with the first file of its kind; "other-serves": another server of the same language is used; "off": language.enabled is false, or a built-in server while language.discovery is false
   */
  state: 'running' | 'found' | 'not-found' | 'other-serves' | 'failed' | 'off';
  workspaceUri: string;
}
/**
 * The language servers the agent asks (see docs/language.md).
 */
export interface LanguageSettings {
  /**
   * end each edit's result with the problems it added, from the language servers
   */
  diagnosticsAfterEdit?: boolean;
  /**
   * use the built-in servers found on PATH; false: only those in languageServers
   */
  discovery?: boolean;
  /**
   * offer the language tool and run language servers for the agent
   */
  enabled?: boolean;
  /**
   * a server unused this long is stopped
   */
  idleShutdownSeconds?: number;
  /**
   * how long an edit's result waits for the servers' fresh diagnostics
   */
  waitSeconds?: number;
}
export interface LanguageStatusParams {
  /**
   * no workspaceUri: every open workspace
   */
  workspaceUri?: string | null;
}
export interface LanguageStatusResult {
  /**
   * the client answers agent/languageQuery: its own servers answer first
   */
  editorFirst: boolean;
  servers: LanguageServerStatus[];
}
export interface McpListParams {
  /**
   * no workspaceUri: every open workspace
   */
  workspaceUri?: string | null;
}
export interface McpListResult {
  servers: McpServerStatus[];
}
export interface McpServerStatus {
  /**
   * what agent/mcp/authorize does: ask to trust this .mcp.json server again, or sign in with OAuth
   */
  authorization?: ('trust' | 'oauth') | null;
  name: string;
  protocolVersion?: string | null;
  /**
   * why it failed, is restarting or waits
   */
  reason?: string | null;
  restarts?: number;
  /**
   * oauth: tokens are stored for it
   */
  signedIn?: boolean | null;
  /**
   * config.toml, .mcp.json, or the editor's settings
   */
  source: 'user' | 'project' | 'editor';
  state: 'stopped' | 'starting' | 'ready' | 'failed' | 'needs-authorization';
  toolCount?: number;
  /**
   * the server's own tool names, when ready
   */
  tools?: string[];
  /**
   * absent for a bad configuration entry
   */
  transport?: ('stdio' | 'http') | null;
  workspaceUri: string;
}
export interface McpPromptArgument {
  description?: string | null;
  name: string;
  required?: boolean;
}
export interface McpPromptInfo {
  arguments?: McpPromptArgument[];
  description?: string | null;
  name: string;
  server: string;
  workspaceUri: string;
}
/**
 * Run an MCP server's prompt as the user: its messages enter as a followup.
 */
export interface McpPromptRunParams {
  arguments?: {
    [k: string]: string;
  } | null;
  name: string;
  server: string;
  /**
   * no sessionId: a new session of the workspace
   */
  sessionId?: string | null;
  workspaceUri?: string | null;
}
export interface McpPromptsParams {
  /**
   * no workspaceUri: every open workspace
   */
  workspaceUri?: string | null;
}
export interface McpPromptsResult {
  prompts: McpPromptInfo[];
}
/**
 * One MCP server by its configured name, in a folder (no workspaceUri: the first folder that has it).
 */
export interface McpServerParams {
  server: string;
  workspaceUri?: string | null;
}
export interface McpSettings {
  /**
   * a server that does not connect within this fails
   */
  connectTimeoutSeconds?: number;
  /**
   * an MCP server's question the user leaves unanswered this long is cancelled
   */
  elicitationTimeoutSeconds?: number;
  /**
   * how long a session's first request waits for servers still starting
   */
  firstStepWaitSeconds?: number;
  /**
   * longer tool results are cut, with a marker
   */
  maxOutputChars?: number;
  /**
   * "auto": stdio servers run in the commands' sandbox (the shell settings) where one works; "require": never unsandboxed; "off": as the user
   */
  sandbox?: 'off' | 'auto' | 'require';
  /**
   * an MCP tool call is cancelled after this long
   */
  toolTimeoutSeconds?: number;
}
/**
 * Result of agent/followup and agent/steer: answered at once, the turn runs on.
 */
export interface MessageRef {
  messageId: string;
  sessionId: string;
}
export interface ModelCheckParams {
  /**
   * no workspaceUri: the first folder
   */
  workspaceUri?: string | null;
}
export interface ModelCheckResult {
  /**
   * which model is configured and why (no secrets)
   */
  description?: string | null;
  error?: LlmFailure | null;
  /**
   * until the first streamed chunk
   */
  latencyMs?: number | null;
  model?: string | null;
  ok: boolean;
  provider?: string | null;
  /**
   * the endpoint asked; absent for the scripted model
   */
  url?: string | null;
}
export interface ModelChoice {
  /**
   * tokens, when configured or well known
   */
  contextWindow?: number | null;
  model: string;
  provider: string;
  /**
   * the settings, or the endpoint's model list
   */
  source: 'configured' | 'endpoint';
}
export interface ModelInfoParams {
  /**
   * no workspaceUri: the first folder
   */
  workspaceUri?: string | null;
}
export interface ModelInfoResult {
  /**
   * nothing is configured: the built-in scripted demo model answers
   */
  demo: boolean;
  model: string;
  /**
   * openai | anthropic | scripted
   */
  provider: string;
  /**
   * why this provider: configured, an environment variable, or what auto found
   */
  reason: string;
}
export interface ModelListParams {
  /**
   * no workspaceUri: the first workspace
   */
  workspaceUri?: string | null;
}
export interface ModelListResult {
  models: ModelChoice[];
  /**
   * why the endpoint's models are missing, when they are
   */
  note?: string | null;
}
export interface ModelSettings {
  apiKey?: string | null;
  /**
   * where the client keeps the key, in its own words (e.g. its own command); an authentication failure names it instead of model.apiKey
   */
  apiKeySource?: string | null;
  baseUrl?: string | null;
  /**
   * where the base URL is set, in words, when neither a setting nor a variable the user can change explains it (the managed policy file); failures about the endpoint name it
   */
  baseUrlSource?: string | null;
  contextWindow?: number | null;
  /**
   * fields added to every request body as they are (null removes one)
   */
  extraBody?: {
    [k: string]: unknown;
  };
  fallback?: FallbackSettings | null;
  headers?: {
    [k: string]: string;
  };
  /**
   * whether the model takes images: true, false, or "auto" (all but known text-only models)
   */
  images?: boolean | 'auto';
  maxOutputTokens?: number | null;
  model?: string | null;
  /**
   * price per million tokens by model-name prefix, for cost estimates (adds to the built-in list prices)
   */
  prices?: {
    [k: string]: PriceSettings;
  };
  /**
   * send the session id as OpenAI's prompt_cache_key (default: only to api.openai.com)
   */
  promptCacheKey?: boolean | null;
  provider?: 'auto' | 'openai' | 'anthropic' | 'scripted';
  script?: unknown[] | null;
  /**
   * stop sequences
   */
  stop?: string[];
  temperature?: number | null;
  timeouts?: TimeoutSettings;
  topP?: number | null;
}
/**
 * US dollars per million tokens; cache prices default to the input price.
 */
export interface PriceSettings {
  cacheRead?: number | null;
  cacheWrite?: number | null;
  input: number;
  output: number;
}
/**
 * Seconds. `first_byte` runs from sending the request to the first body
 * byte; `idle` is the longest allowed gap between two network reads.
 */
export interface TimeoutSettings {
  connect?: number;
  firstByte?: number;
  idle?: number;
}
/**
 * An agent edit's hunk waiting for the user ("edits.review": "review"), where it is now.
 */
export interface PendingHunkInfo {
  callId: string;
  hunkId: string;
  newText: string;
  /**
   * what undo puts back
   */
  oldText: string;
  range: Range1;
  sessionId: string;
  turn: number;
  uri: string;
}
/**
 * its whole lines in the buffer as it is now (character 0 to character 0 of the line after; start = end: lines were deleted there)
 */
export interface Range1 {
  end: Position;
  start: Position;
}
/**
 * A question asked in several windows was answered in another one: drop it here.
 */
export interface PermissionAnsweredParams {
  answer: 'once' | 'session' | 'always' | 'deny';
  permissionId: string;
  sessionId?: string | null;
}
export interface PermissionParams {
  /**
   * why this is asked every time, for the user
   */
  asksEveryTime?: string | null;
  /**
   * the answers the server honours; show only these (a command it always confirms has once and deny)
   */
  choices?: ('once' | 'session' | 'always' | 'deny')[];
  command?: string | null;
  detail?: string | null;
  /**
   * an edit waiting for approval ("edits.review": "ask"): its unified diff
   */
  diff?: string | null;
  kind: 'command' | 'read' | 'write' | 'delete';
  path?: string | null;
  /**
   * set when the question is asked in several windows at once (the agent host): agent/permission/answered names it once one answered
   */
  permissionId?: string | null;
  sessionId?: string | null;
  title: string;
  tool: string;
}
export interface PermissionResult {
  answer: 'once' | 'session' | 'always' | 'deny';
}
export interface PermissionRevokeParams {
  id: string;
  /**
   * the rule's workspace; no workspaceUri: the first folder
   */
  workspaceUri?: string | null;
}
export interface PermissionRuleInfo {
  action: 'allow' | 'ask' | 'deny';
  commandPrefix?: string | null;
  /**
   * names the rule for agent/permission/revoke
   */
  id: string;
  /**
   * workspace-relative
   */
  pathGlob?: string | null;
  revocable: boolean;
  /**
   * session and workspace: remembered answers ("Allow for session", "Always allow"), revocable; settings and policy: written in the settings or the managed policy
   */
  scope: 'session' | 'workspace' | 'settings' | 'policy';
  /**
   * scope session only
   */
  sessionId?: string | null;
  /**
   * for the user: the file or the session that holds it
   */
  source: string;
  /**
   * a tool name, "*" for any, or a prefix ending in "*"
   */
  tool: string;
  workspaceUri: string;
}
/**
 * allow / ask / deny a tool, optionally only for a command prefix or a path glob.
 */
export interface PermissionRuleSettings {
  action: 'allow' | 'ask' | 'deny';
  commandPrefix?: string | null;
  pathGlob?: string | null;
  /**
   * a tool name, or "*" for any
   */
  tool: string;
}
export interface PermissionRulesParams {
  /**
   * no workspaceUri: every open workspace
   */
  workspaceUri?: string | null;
}
export interface PermissionRulesResult {
  rules: PermissionRuleInfo[];
}
export interface PermissionSettings {
  /**
   * an unanswered permission question counts as deny after this long
   */
  askTimeoutSeconds?: number;
  /**
   * per kind of call; built-in: commands ask, reads and writes are allowed
   */
  defaults?: {
    [k: string]: 'allow' | 'ask' | 'deny';
  };
  rules?: PermissionRuleSettings[];
  /**
   * a command that runs sandboxed with no network: "allow" (no question unless a rule asks or denies) or "ask" like any command
   */
  sandboxedCommands?: 'allow' | 'ask';
}
export interface ReviewListParams {
  /**
   * no sessionId: every session's
   */
  sessionId?: string | null;
  /**
   * only this document's
   */
  uri?: string | null;
}
export interface ReviewListResult {
  hunks: PendingHunkInfo[];
}
/**
 * Keep or undo one hunk (`hunkId`), a document's (`uri`) or all of a session's (`all: true`).
 */
export interface ReviewResolveParams {
  action: 'keep' | 'undo';
  all?: boolean;
  hunkId?: string | null;
  sessionId: string;
  uri?: string | null;
}
export interface ReviewResolveResult {
  /**
   * the hunk ids kept or undone
   */
  resolved: string[];
  skipped: ReviewSkip[];
}
export interface ReviewSkip {
  hunkId: string;
  reason: string;
}
export interface SaveDocumentsParams {
  uris: string[];
}
export interface SaveDocumentsResult {
  /**
   * the URIs the client left unsaved because their buffers hold the user's own unsaved changes (the agent's edit is in the buffer, the file on disk is unchanged); the model is told
   */
  unsaved?: string[] | null;
}
export interface SessionCompactResult {
  compacted: boolean;
}
export interface SessionDeleteParams {
  /**
   * a worktree session: delete its worktree and branch even when they hold changes not landed in the main checkout (without it, refused with -32602)
   */
  force?: boolean;
  sessionId: string;
}
export interface SessionDeleteResult {
  deleted: boolean;
}
/**
 * One or more consecutive durable events of a session, in seq order.
 */
export interface SessionEventParams {
  events: Event[];
  sessionId: string;
}
export interface SessionExportParams {
  sessionId: string;
}
/**
 * A session as a Markdown document (agent_lsp/views/markdown.py).
 */
export interface SessionExportResult {
  /**
   * its title, what the user wrote, the answers, the tools run and what failed
   */
  markdown: string;
  /**
   * the session's title, when it has one
   */
  title?: string | null;
}
export interface SessionFileParams {
  /**
   * an image block's `file`: the name of the file beside the session log
   */
  file: string;
  sessionId: string;
}
/**
 * A file a session's messages refer to (an image the user sent).
 */
export interface SessionFileResult {
  /**
   * the bytes, base64
   */
  data: string;
  mediaType: string;
  size: number;
}
export interface SessionForkParams {
  sessionId: string;
  /**
   * the new session shares the history up to the end of this turn
   */
  turn: number;
}
export interface SessionInfo {
  /**
   * epoch milliseconds
   */
  createdAt: number;
  /**
   * listed for a `query`: the message text around a word of it (absent when only the title has the words)
   */
  excerpt?: string | null;
  /**
   * a fork: the parent's last turn it shares
   */
  forkTurn?: number | null;
  /**
   * a fork: the session it was forked from; a sub-agent's child session: the session that ran it
   */
  parentSessionId?: string | null;
  /**
   * a sub-agent's child session: the parent's `subagent` tool call that ran it
   */
  parentToolCallId?: string | null;
  /**
   * set when the session's file is damaged: what is wrong, naming the file and the line; loading it shows the events before the damage, read-only
   */
  problem?: string | null;
  sessionId: string;
  status: 'idle' | 'running';
  title?: string | null;
  turns: number;
  /**
   * epoch milliseconds
   */
  updatedAt: number;
  /**
   * tokens and estimated cost up to the last turn's end
   */
  usage?: UsageTotal | null;
  workspaceUri: string;
  /**
   * a session in its own git worktree (`agent/session/new` with `worktree`): its branch, folder and changes against the base
   */
  worktree?: WorktreeInfo | null;
}
/**
 * Where a worktree session works, and what it changed against its base.
 */
export interface WorktreeInfo {
  /**
   * the commit the branch started from
   */
  base: string;
  branch: string;
  /**
   * files changed in the worktree against the base (untracked ones included)
   */
  filesChanged: number;
  linesAdded: number;
  linesRemoved: number;
  /**
   * the worktree's folder
   */
  path: string;
}
export interface SessionListParams {
  /**
   * at most this many (the most recently updated)
   */
  limit?: number | null;
  /**
   * only sessions with every word of this in their title or the text of their user and assistant messages (any case)
   */
  query?: string | null;
  /**
   * only sessions updated at or after this epoch ms
   */
  updatedAfter?: number | null;
  /**
   * only sessions updated before this epoch ms
   */
  updatedBefore?: number | null;
  /**
   * no workspaceUri: every open workspace
   */
  workspaceUri?: string | null;
}
export interface SessionListResult {
  sessions: SessionInfo[];
}
/**
 * Everything a client needs to redraw a session: its durable events and its inbox.
 */
export interface SessionLoadResult {
  events: Event[];
  /**
   * set when another agent-lsp process has the session open: this answer is a read-only snapshot from disk (no live events follow; requests that change the session fail with -32010)
   */
  heldByPid?: number | null;
  inbox: Inbox;
  /**
   * set when the session's file is damaged: what is wrong, naming the file and the line; `events` are those before the damage, read from disk (no live events follow; requests that change the session fail with -32012)
   */
  problem?: string | null;
  sessionId: string;
  status: 'idle' | 'running';
  workspaceUri: string;
}
export interface SessionModeParams {
  /**
   * leaving plan mode: queue the plan for the next turn
   */
  carryPlan?: boolean;
  mode: 'default' | 'plan';
  sessionId: string;
}
export interface SessionModeResult {
  mode: 'default' | 'plan';
  previous: 'default' | 'plan';
}
export interface SessionNewParams {
  title?: string | null;
  workspaceUri?: string | null;
  /**
   * `true` or `{base?}`: the session works in a new git worktree of the folder's repository, on a new branch `agent/<key>`, outside the repository; a folder outside a git repository is refused with -32602
   */
  worktree?: WorktreeRequest | boolean | null;
}
export interface WorktreeRequest {
  /**
   * the branch, tag or commit the worktree starts from (no base: the folder's `HEAD`)
   */
  base?: string | null;
}
/**
 * On the agent host: how many windows have the session open (this one included).
 */
export interface SessionPresenceParams {
  sessionId: string;
  windows: number;
}
export interface SessionRef {
  sessionId: string;
}
export interface SessionRenameParams {
  sessionId: string;
  /**
   * the session's title from now on (whitespace collapsed; 1 to 200 characters)
   */
  title: string;
}
export interface SessionRenameResult {
  /**
   * the title as recorded (a `session/title` event)
   */
  title: string;
}
/**
 * One page of a session's transcript: `forward` from `seq` (default 0), or
 * `backward`, ending just before `seq` (default: the newest page).
 */
export interface SessionReplayParams {
  direction?: 'forward' | 'backward';
  /**
   * at most this many events (after merging)
   */
  limit?: number;
  seq?: number | null;
  sessionId: string;
}
/**
 * A page of the log, `startSeq..nextSeq-1`, runs of text (or reasoning) deltas
 * merged into one `assistant/chunk` with `lastSeq`; `endSeq` is the length of the
 * log when answered (the seq the next live event gets).
 */
export interface SessionReplayResult {
  endSeq: number;
  events: Event[];
  /**
   * set when another agent-lsp process has the session open: a read-only page from disk
   */
  heldByPid?: number | null;
  inbox: Inbox;
  nextSeq: number;
  /**
   * set when the session's file is damaged: what is wrong, naming the file and the line; the page is of the events before the damage, read-only
   */
  problem?: string | null;
  sessionId: string;
  startSeq: number;
  status: 'idle' | 'running';
  workspaceUri: string;
}
export interface SessionRewindParams {
  /**
   * also revert the files the rewound turns changed
   */
  revertFiles?: boolean;
  sessionId: string;
  /**
   * the history is cut back to before this turn
   */
  turn: number;
}
export interface SessionRewindResult {
  /**
   * how many history entries the model no longer sees
   */
  removedMessages: number;
  /**
   * with revertFiles: per rewound turn, newest first
   */
  reverts: TurnRevertReport[];
}
export interface TurnRevertReport {
  reverted: string[];
  skipped: SkippedPath[];
  turn: number;
}
export interface SessionSetModelParams {
  /**
   * reasoning effort (OpenAI-compatible endpoints); none: the endpoint's default
   */
  effort?: ('minimal' | 'low' | 'medium' | 'high') | null;
  model: string;
  /**
   * "openai", "anthropic" or "scripted"; default: the session's
   */
  provider?: string | null;
  sessionId: string;
}
export interface SessionSetModelResult {
  effort?: string | null;
  model: string;
  previousModel: string;
  previousProvider: string;
  provider: string;
}
export interface SessionSettings {
  /**
   * with titles = "model": another (cheaper) model of the same provider to ask
   */
  titleModel?: string | null;
  /**
   * how a session gets its title: "first-message" (the first thing the user wrote) or "model" (after the first turn the session's model is asked for a short title, in a separate small request)
   */
  titles?: 'first-message' | 'model';
}
/**
 * The `agentLsp` settings object (same shape in every layer).
 */
export interface Settings {
  cancelGraceSeconds?: number;
  edits?: EditSettings;
  /**
   * user hooks by event name (see docs/capabilities.md)
   */
  hooks?: {
    [k: string]: unknown;
  };
  language?: LanguageSettings;
  /**
   * language servers by name, added or changing a built-in (see docs/language.md)
   */
  languageServers?: {
    [k: string]: unknown;
  };
  /**
   * agent_lsp's log level; default: the command line's --log-level
   */
  logLevel?: ('debug' | 'info' | 'warning' | 'error') | null;
  maxParallelToolCalls?: number;
  mcp?: McpSettings;
  /**
   * MCP servers by name (see docs/mcp.md)
   */
  mcpServers?: {
    [k: string]: unknown;
  };
  model?: ModelSettings;
  permissions?: PermissionSettings;
  sessions?: SessionSettings;
  /**
   * where session logs go; default: <platform data dir>/agent-lsp/sessions
   */
  sessionsDir?: string | null;
  shell?: ShellSettings;
  /**
   * the tools offered: "small" (read, edit, grep, run, language) below an 8k window
   */
  toolSet?: 'auto' | 'full' | 'small';
}
/**
 * The environment of the agent's commands (see agent_lsp/tools/command_env.py).
 */
export interface ShellSettings {
  /**
   * sandboxed commands may make Unix sockets
   */
  allowUnixSockets?: boolean;
  /**
   * with network "off": the hosts (pypi.org, *.github.com) sandboxed commands reach through the sandbox's proxy
   */
  allowedDomains?: string[];
  /**
   * "all": the server's environment without secrets; "core": PATH, HOME, LANG and the like only; "none": nothing
   */
  inherit?: 'all' | 'core' | 'none';
  /**
   * where bubblewrap does not work, sandbox with Landlock and seccomp (weaker); false: unsandboxed, asked about
   */
  landlock?: boolean;
  /**
   * may sandboxed commands use the network
   */
  network?: 'off' | 'on';
  /**
   * variables (names or globs) passed through even so
   */
  passEnv?: string[];
  /**
   * visible (read-only) in the sandbox besides the system and the toolchains
   */
  readablePaths?: string[];
  /**
   * "auto": sandboxed where a sandbox works, else asked about as unsandboxed; "require": never run a command unsandboxed; "off": no sandbox
   */
  sandbox?: 'auto' | 'require' | 'off';
  /**
   * command prefixes (e.g. docker) run outside the sandbox, always asked about
   */
  sandboxExceptions?: string[];
  /**
   * writable in the sandbox besides the workspace and the temp folder
   */
  writablePaths?: string[];
}
export interface SkillInfo {
  description: string;
  name: string;
  /**
   * the skill's SKILL.md
   */
  path: string;
  /**
   * the user's skills folder or the workspace's
   */
  source: 'user' | 'project';
  workspaceUri: string;
}
export interface SkillListParams {
  /**
   * no workspaceUri: every open workspace
   */
  workspaceUri?: string | null;
}
export interface SkillListResult {
  skills: SkillInfo[];
}
/**
 * Invoke a skill as the user: its instructions (and `arguments`) enter as a followup.
 */
export interface SkillRunParams {
  /**
   * what the user adds, e.g. the text after /name
   */
  arguments?: string | null;
  name: string;
  /**
   * no sessionId: the workspace's current session
   */
  sessionId?: string | null;
  workspaceUri?: string | null;
}
export interface StatusParams {
  sessionId: string;
  status: 'idle' | 'running';
  [k: string]: unknown;
}
export interface SteerParams {
  content: string | (ImageBlock | ContentBlock)[];
  context?: ContextItem[] | null;
  sessionId: string;
}
export interface SubagentCancelParams {
  /**
   * the sub-agent's own session (childSessionId)
   */
  sessionId: string;
}
export interface SubagentCancelResult {
  cancelled: boolean;
}
export interface SubagentStatusParams {
  agentType?: string | null;
  callId: string;
  childSessionId: string;
  description: string;
  /**
   * the parent session
   */
  sessionId: string;
  status: 'running' | 'completed' | 'cancelled' | 'failed';
  usage?: Usage1 | null;
  [k: string]: unknown;
}
export interface ToolProgressParams {
  callId: string;
  data: {
    [k: string]: unknown;
  };
  sessionId: string;
  [k: string]: unknown;
}
export interface TurnRevertParams {
  sessionId: string;
  turn: number;
}
export interface TurnRevertResult {
  reverted: string[];
  skipped: SkippedPath[];
}
