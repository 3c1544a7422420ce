// Generates src/protocol.generated.ts from docs/protocol.schema.json (which the
// server generates from its pydantic models): every wire type, the method
// names, each method's params and result types (the typed `Request`) and the
// protocol constants, so the extension speaks exactly the server's contract. `node scripts/gen_protocol.mjs --check` fails when the
// committed file is stale (the unit tests run it).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile } from 'json-schema-to-typescript';

const here = dirname(fileURLToPath(import.meta.url));
const schemaPath = join(here, '..', '..', '..', 'docs', 'protocol.schema.json');
const outPath = join(here, '..', 'src', 'protocol.generated.ts');

/** Titles name types in json-schema-to-typescript: keep them on definitions only. */
function stripTitles(node, keep) {
  if (Array.isArray(node)) {
    return node.map((n) => stripTitles(n, false));
  }
  if (node && typeof node === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === 'title' && !keep) {
        continue;
      }
      if (k === '$defs') {
        out[k] = Object.fromEntries(Object.entries(v).map(([name, def]) => [name, stripTitles(def, true)]));
      } else if (k === 'properties') {
        out[k] = Object.fromEntries(Object.entries(v).map(([name, p]) => [name, stripTitles(p, false)]));
      } else {
        out[k] = stripTitles(v, false);
      }
    }
    return out;
  }
  return node;
}

/** `#/$defs/Name` -> `Name`. */
function refName(ref) {
  return ref.$ref.split('/').pop();
}

export async function generate() {
  const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
  const defs = stripTitles({ $defs: schema.$defs }, false).$defs;
  // One root that names every definition, so each becomes an exported type.
  const root = {
    title: 'ProtocolDefinitions',
    type: 'object',
    properties: Object.fromEntries(Object.keys(defs).map((name) => [name, { $ref: `#/$defs/${name}` }])),
    additionalProperties: false,
    $defs: defs,
  };
  let types = await compile(root, 'ProtocolDefinitions', {
    bannerComment: '',
    additionalProperties: false,
    unreachableDefinitions: false,
    format: true,
    style: { singleQuote: true, printWidth: 120 },
  });
  types = types.replace(/export interface ProtocolDefinitions \{[\s\S]*?\n\}\n/, '');
  const methods = Object.fromEntries(Object.keys(schema.methods).map((m) => [m, m]));
  const table = (direction, kind, entry) =>
    Object.entries(schema.methods)
      .filter(([, m]) => m.direction === direction && m.kind === kind)
      .map(([name, m]) => `  '${name}': ${entry(refName(m.params), m.result && refName(m.result))};\n`)
      .join('');
  const requests =
    '/** Every client -> server request: its params and its result. */\n' +
    `export interface ClientRequests {\n${table('client->server', 'request', (p, r) => `{ params: ${p}; result: ${r} }`)}}\n\n` +
    '/** Every server -> client notification: its params. */\n' +
    `export interface ServerNotifications {\n${table('server->client', 'notification', (p) => p)}}\n\n` +
    '/** Every server -> client request: its params and its result. */\n' +
    `export interface ServerRequests {\n${table('server->client', 'request', (p, r) => `{ params: ${p}; result: ${r} }`)}}\n\n` +
    '/** A client -> server request, typed by its method: the params it takes, the result it answers. */\n' +
    'export type Request = <M extends keyof ClientRequests>(\n' +
    '  method: M,\n' +
    "  params: ClientRequests[M]['params'],\n" +
    ") => Promise<ClientRequests[M]['result']>;\n\n" +
    '/** `Request` over an untyped JSON-RPC sender (the language client\'s `sendRequest`). */\n' +
    'export function typedRequest(send: (method: string, params: unknown) => Promise<unknown>): Request {\n' +
    '  return (method, params) => send(method, params) as Promise<any>;\n' +
    '}\n\n';
  const constants = Object.entries(schema.constants)
    .map(([name, c]) => `/** ${c.description} */\nexport const ${name} = ${JSON.stringify(c.value)};\n`)
    .join('\n');
  return (
    '// GENERATED from docs/protocol.schema.json by scripts/gen_protocol.mjs: do not edit.\n' +
    '// The server generates that schema from its models (python -m agent_lsp.lsp.protocol_gen --schema).\n' +
    '/* eslint-disable */\n\n' +
    constants +
    '\n/** Every method of the protocol, by its wire name. */\n' +
    `export const METHODS = ${JSON.stringify(methods, null, 2).replace(/"/g, "'")} as const;\n\n` +
    requests +
    types
  );
}

const text = await generate();
if (process.argv.includes('--check')) {
  const committed = readFileSync(outPath, 'utf8');
  if (committed !== text) {
    console.error('src/protocol.generated.ts is stale: run `npm run gen-protocol` (after regenerating docs/protocol.schema.json)');
    process.exit(1);
  }
} else {
  writeFileSync(outPath, text);
}
