// One full ACP session against `agent-lsp acp`, driven by the official TypeScript SDK's client.
//
//   node scenario.mjs '<agent command as a JSON array>' <workspace> <file>
//
// prompt -> streamed text -> a tool call with a permission request -> the edit
// written through fs/write_text_file -> a second prompt cancelled -> a new
// agent process loads the session. Prints one JSON object of what it saw.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const [command, workspace, file] = [JSON.parse(process.argv[2]), process.argv[3], process.argv[4]];

function editor(buffers, answers) {
  const seen = { updates: [], permissions: [], writes: [], reads: [] };
  const app = client({ name: "agent-lsp tests" })
    .onNotification(methods.client.session.update, ({ params }) => { seen.updates.push(params); })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      seen.permissions.push(params);
      const optionId = answers.shift();
      return { outcome: optionId ? { outcome: "selected", optionId } : { outcome: "cancelled" } };
    })
    .onRequest(methods.client.fs.readTextFile, ({ params }) => {
      seen.reads.push(params.path);
      if (!(params.path in buffers)) throw new Error(`no such file ${params.path}`);
      return { content: buffers[params.path] };
    })
    .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
      seen.writes.push([params.path, params.content]);
      buffers[params.path] = params.content;
      return {};
    });
  return { app, seen };
}

async function withAgent(app, op) {
  const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  try {
    return await app.connectWith(stream, async (agent) => {
      const init = await agent.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
      });
      return op(agent, init);
    });
  } finally {
    child.stdin.end();
    await new Promise((resolve) => child.once("exit", resolve));
  }
}

const waitFor = async (predicate) => {
  for (let i = 0; i < 1000 && !predicate(); i++) await new Promise((r) => setTimeout(r, 10));
};
const text = (updates) => updates.filter((n) => n.update.sessionUpdate === "agent_message_chunk")
  .map((n) => n.update.content.text).join("");
// Consecutive text chunks of one kind joined: the agent coalesces deltas waiting to be sent,
// so live and replay may cut the same text at different places.
const TEXT_CHUNKS = ["agent_message_chunk", "agent_thought_chunk"];
const replayable = (updates) => updates.map((n) => n.update)
  .filter((u) => !["available_commands_update", "user_message_chunk"].includes(u.sessionUpdate))
  .reduce((out, u) => {
    const last = out[out.length - 1];
    if (last && TEXT_CHUNKS.includes(u.sessionUpdate) && last.sessionUpdate === u.sessionUpdate) {
      out[out.length - 1] = { ...last, content: { ...last.content, text: last.content.text + u.content.text } };
    } else out.push(u);
    return out;
  }, []);

const buffers = { [file]: "x = 1  # unsaved\n" };
const live = editor(buffers, ["allow_once"]);
const result = await withAgent(live.app, async (agent, init) => {
  const { sessionId } = await agent.request(methods.agent.session.new, { cwd: workspace, mcpServers: [] });
  const first = await agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "fix x" }] });
  const answerText = text(live.seen.updates);
  const second = agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "more" }] });
  await waitFor(() => text(live.seen.updates).length > answerText.length);
  const started = performance.now();
  await agent.notify(methods.agent.session.cancel, { sessionId });
  const cancelled = await second;
  const cancelMs = performance.now() - started;
  await new Promise((r) => setTimeout(r, 200));
  const listed = await agent.request(methods.agent.session.list, { cwd: workspace });
  return { init, sessionId, first, cancelled, cancelMs, answerText, listed };
});

const later = editor({ ...buffers }, []);
const loaded = await withAgent(later.app, async (agent) => {
  const reply = await agent.request(methods.agent.session.load, { cwd: workspace, sessionId: result.sessionId, mcpServers: [] });
  return { reply, updates: later.seen.updates };
});

console.log(JSON.stringify({
  ...result,
  kinds: live.seen.updates.map((n) => n.update.sessionUpdate),
  toolUpdates: live.seen.updates.map((n) => n.update).filter((u) => u.sessionUpdate.startsWith("tool_call")),
  permissions: live.seen.permissions,
  writes: live.seen.writes,
  reads: live.seen.reads,
  replayEqualsLive: JSON.stringify(replayable(loaded.updates)) === JSON.stringify(replayable(live.seen.updates)),
  replayedPrompts: loaded.updates.filter((n) => n.update.sessionUpdate === "user_message_chunk").map((n) => n.update.content.text),
}));
