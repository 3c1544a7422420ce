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
}

export const MISSING_SERVER_MESSAGE =
  'agent_lsp: the server was not found. Install it (`pipx install agent-language-server`, or `pip install -e .` in a checkout) ' +
  'so `agent-lsp` is on PATH or in the workspace .venv, or set `agentLsp.server.path` ' +
  '(or `agentLsp.server.pythonPath` to a Python that has agent_lsp).';

function executableNames(base: string, platform: NodeJS.Platform): string[] {
  return platform === 'win32' ? [`${base}.exe`, `${base}.cmd`, base] : [base];
}

function searchPath(name: string, env: ResolveEnv): string | null {
  const sep = env.platform === 'win32' ? ';' : ':';
  for (const dir of env.pathVariable.split(sep)) {
    if (!dir) {
      continue;
    }
    for (const candidate of executableNames(name, env.platform)) {
      const full = path.join(dir, candidate);
      if (env.isExecutable(full)) {
        return full;
      }
    }
  }
  return null;
}

/** The command to run, or null when nothing usable was found. Order: the
 * configured path, the configured interpreter, each workspace folder's .venv,
 * then PATH. */
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
    for (const name of executableNames('agent-lsp', env.platform)) {
      const candidate = path.join(folder, '.venv', binDir, name);
      if (env.isExecutable(candidate)) {
        return { command: candidate, args: extra, source: `${folder}/.venv` };
      }
    }
  }
  const onPath = searchPath('agent-lsp', env);
  if (onPath) {
    return { command: onPath, args: extra, source: 'PATH' };
  }
  return null;
}
