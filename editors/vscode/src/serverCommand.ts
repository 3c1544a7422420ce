// Finding the agent-lsp server to start. Pure (the file system and the
// environment are passed in) so every branch is tested.

import * as path from 'path';

export interface ServerLaunchSettings {
  path: string; // agentLsp.server.path
  pythonPath: string; // agentLsp.server.pythonPath
  args: string[]; // agentLsp.server.args
}

export interface ServerCommand {
  command: string;
  args: string[];
  /** Where it came from, for the log: "agentLsp.server.path", ".venv", "PATH", ... */
  source: string;
}

export interface ResolveEnv {
  pathVariable: string;
  platform: NodeJS.Platform;
  isExecutable: (file: string) => boolean;
  /** The home directory and the environment, for the tool installers' own dirs (pipx, uv). */
  home?: string;
  variables?: Record<string, string | undefined>;
  /** The interpreter the Python extension has selected for the workspace, when it is installed. */
  pythonInterpreter?: string;
}

/** The distribution's name on the package index: pipx and uv name their environments after it. */
const DISTRIBUTION = 'agent-language-server';

export const MISSING_SERVER_MESSAGE =
  'agent_lsp: the server was not found (looked in the workspace .venv and venv, the Python extension\'s interpreter, PATH, ' +
  '~/.local/bin, pipx and uv tool environments). Install it from a checkout of agent_lsp ("pipx install /path/to/checkout", or "pip install ." in it; ' +
  '"pipx install agent-language-server" once it is published), ' +
  'or choose the agent-lsp program (it sets agentLsp.server.path).';

function executableNames(base: string, platform: NodeJS.Platform): string[] {
  return platform === 'win32' ? [`${base}.exe`, `${base}.cmd`, base] : [base];
}

function searchPath(env: ResolveEnv): string | null {
  const sep = env.platform === 'win32' ? ';' : ':';
  for (const dir of env.pathVariable.split(sep)) {
    const found = dir ? findIn(dir, env) : null;
    if (found) {
      return found;
    }
  }
  return null;
}

/** Where installers put the command, with the name to log for each: ~/.local/bin
 * (pip --user, pipx and uv's default bin dir), then the environments pipx and
 * uv tool keep per package (found even when their bin dir is not on PATH). */
function installerDirs(env: ResolveEnv): Array<[string, string]> {
  const vars = env.variables ?? {};
  const home = env.home ?? '';
  const bin = env.platform === 'win32' ? 'Scripts' : 'bin';
  const dataHome = vars.XDG_DATA_HOME || (home && path.join(home, '.local', 'share'));
  const dirs: Array<[string, string | undefined]> = [
    ['~/.local/bin', home && path.join(home, '.local', 'bin')],
    ['pipx', vars.PIPX_BIN_DIR],
    ['pipx', vars.PIPX_HOME && path.join(vars.PIPX_HOME, 'venvs', DISTRIBUTION, bin)],
    ['pipx', home && path.join(home, '.local', 'pipx', 'venvs', DISTRIBUTION, bin)],
    ['pipx', dataHome && path.join(dataHome, 'pipx', 'venvs', DISTRIBUTION, bin)],
    ['uv tool', vars.UV_TOOL_BIN_DIR],
    ['uv tool', vars.UV_TOOL_DIR && path.join(vars.UV_TOOL_DIR, DISTRIBUTION, bin)],
    ['uv tool', dataHome && path.join(dataHome, 'uv', 'tools', DISTRIBUTION, bin)],
  ];
  return dirs.filter((d): d is [string, string] => !!d[1]);
}

function findIn(dir: string, env: ResolveEnv): string | null {
  for (const name of executableNames('agent-lsp', env.platform)) {
    const candidate = path.join(dir, name);
    if (env.isExecutable(candidate)) {
      return candidate;
    }
  }
  return null;
}

/** The command to run, or null when nothing usable was found. Order: the
 * configured path, the configured interpreter, each workspace folder's .venv
 * (then venv), the Python extension's interpreter's environment, PATH, then
 * where pip --user, pipx and uv install commands. */
export function resolveServerCommand(settings: ServerLaunchSettings, folders: string[], env: ResolveEnv): ServerCommand | null {
  const extra = settings.args ?? [];
  if (settings.path.trim()) {
    return { command: settings.path.trim(), args: extra, source: 'agentLsp.server.path' };
  }
  if (settings.pythonPath.trim()) {
    return { command: settings.pythonPath.trim(), args: ['-m', 'agent_lsp', ...extra], source: 'agentLsp.server.pythonPath' };
  }
  const binDir = env.platform === 'win32' ? 'Scripts' : 'bin';
  for (const folder of folders) {
    for (const venv of ['.venv', 'venv']) {
      const found = findIn(path.join(folder, venv, binDir), env);
      if (found) {
        return { command: found, args: extra, source: `${folder}/${venv}` };
      }
    }
  }
  if (env.pythonInterpreter) {
    const found = findIn(path.dirname(env.pythonInterpreter), env);
    if (found) {
      return { command: found, args: extra, source: "the Python extension's interpreter" };
    }
  }
  const onPath = searchPath(env);
  if (onPath) {
    return { command: onPath, args: extra, source: 'PATH' };
  }
  for (const [source, dir] of installerDirs(env)) {
    const found = findIn(dir, env);
    if (found) {
      return { command: found, args: extra, source };
    }
  }
  return null;
}
