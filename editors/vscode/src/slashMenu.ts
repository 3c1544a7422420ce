// The panel input's "/" menu, kept pure so it is tested without a DOM: what
// the menu offers (the panel's commands, the workspace's skills, the MCP
// servers' prompts), what it shows for what is typed, the keys that drive it,
// and how a typed `/name arguments` line is read.

/** One entry of the menu. `name` is what follows the slash. */
export interface SlashItem {
  name: string;
  kind: 'command' | 'skill' | 'prompt';
  description: string;
  /** A prompt's arguments, in order (for a skill: none; it takes free text). */
  arguments?: { name: string; description?: string | null; required?: boolean }[];
}

/** The panel's own commands: each runs the VS Code command it names. */
export const PANEL_COMMANDS: (SlashItem & { command: string })[] = [
  { name: 'new', kind: 'command', description: 'Start a new session', command: 'agentLsp.newSession' },
  { name: 'resume', kind: 'command', description: 'Resume a session of this workspace', command: 'agentLsp.resumeSession' },
  { name: 'compact', kind: 'command', description: 'Compact the conversation (summarise older messages)', command: 'agentLsp.compactSession' },
  { name: 'revert', kind: 'command', description: "Revert the last turn's edits", command: 'agentLsp.revertTurn' },
  { name: 'model', kind: 'command', description: 'Switch the model of this session', command: 'agentLsp.switchModel' },
  { name: 'mcp', kind: 'command', description: 'Show the MCP servers and their state', command: 'agentLsp.showMcpServers' },
  { name: 'permissions', kind: 'command', description: 'Manage the remembered permission rules', command: 'agentLsp.managePermissions' },
];

/** The panel's commands first, then skills, then prompts; a skill named like a command is left out (the command wins). */
export function slashItems(skills: { name: string; description: string }[], prompts: { server: string; name: string; description?: string | null; arguments?: SlashItem['arguments'] }[]): SlashItem[] {
  const items: SlashItem[] = PANEL_COMMANDS.map(({ name, kind, description }) => ({ name, kind, description }));
  const taken = new Set(items.map((i) => i.name));
  for (const skill of skills) {
    if (!taken.has(skill.name)) {
      taken.add(skill.name);
      items.push({ name: skill.name, kind: 'skill', description: skill.description });
    }
  }
  for (const prompt of prompts) {
    items.push({ name: `${prompt.server}:${prompt.name}`, kind: 'prompt', description: prompt.description ?? '', arguments: prompt.arguments ?? [] });
  }
  return items;
}

/** What is typed after "/" while the input holds nothing but a slash word
 * (the caret at its end); null when the menu has nothing to do. */
export function slashQuery(text: string, caret: number): string | null {
  const match = /^\/(\S*)$/.exec(text);
  return match && caret === text.length ? match[1] : null;
}

/** The items that fit the query, best first: the name starts with it, then
 * a part of the name (after ":", "-" or "_") does, then the name contains it.
 * Within each group the menu's order stays. */
export function filterSlash(items: SlashItem[], query: string): SlashItem[] {
  const q = query.toLowerCase();
  const rank = (item: SlashItem): number => {
    const name = item.name.toLowerCase();
    if (name.startsWith(q)) {
      return 0;
    }
    if (name.split(/[:_-]/).some((part) => part.startsWith(q))) {
      return 1;
    }
    return name.includes(q) ? 2 : -1;
  };
  return items
    .map((item) => ({ item, rank: rank(item) }))
    .filter((x) => x.rank >= 0)
    .sort((a, b) => a.rank - b.rank)
    .map((x) => x.item);
}

export type MenuKey = 'up' | 'down' | 'run' | 'complete' | 'close' | null;

/** ↑/↓ move, Enter runs the highlighted item, Tab writes it into the input (to add arguments), Esc closes the menu. */
export function menuKey(e: { key: string; shiftKey?: boolean; altKey?: boolean; ctrlKey?: boolean; metaKey?: boolean; isComposing?: boolean }): MenuKey {
  if (e.isComposing || e.altKey || e.ctrlKey || e.metaKey) {
    return null;
  }
  switch (e.key) {
    case 'ArrowUp':
      return 'up';
    case 'ArrowDown':
      return 'down';
    case 'Enter':
      return e.shiftKey ? null : 'run';
    case 'Tab':
      return e.shiftKey ? null : 'complete';
    case 'Escape':
      return 'close';
    default:
      return null;
  }
}

/** The highlighted row after ↑ or ↓, wrapping around. */
export function moveSelection(index: number, count: number, key: 'up' | 'down'): number {
  if (count === 0) {
    return 0;
  }
  return (index + (key === 'down' ? 1 : count - 1)) % count;
}

/** A typed line `/name rest…`: the name and what follows it; null for anything else. */
export function parseSlashLine(text: string): { name: string; rest: string } | null {
  const match = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  return match ? { name: match[1], rest: (match[2] ?? '').trim() } : null;
}

/** The argument hint a row shows: `‹required› [optional]`. */
export function argumentHint(item: SlashItem): string {
  return (item.arguments ?? []).map((a) => (a.required ? `‹${a.name}›` : `[${a.name}]`)).join(' ');
}

export interface PromptArguments {
  values: Record<string, string>;
  /** Required arguments with no value. */
  missing: string[];
  /** Why the text cannot be read as this prompt's arguments, if it cannot. */
  error?: string;
}

const PAIR = /([\w.-]+)=(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s"']\S*)?)/y;

/** A prompt's arguments typed after its name: `name=value` pairs (values
 * with spaces in quotes), or, for a prompt whose first argument is all the
 * text says, that text alone (`/web:review src/a.py`). */
export function promptArguments(args: NonNullable<SlashItem['arguments']>, rest: string): PromptArguments {
  const values: Record<string, string> = {};
  const known = new Set(args.map((a) => a.name));
  const text = rest.trim();
  if (text && !/^[\w.-]+=/.test(text)) {
    if (!args.length) {
      return { values, missing: [], error: 'this prompt takes no arguments' };
    }
    values[args[0].name] = text;
  } else {
    let at = 0;
    while (at < text.length) {
      PAIR.lastIndex = at;
      const match = PAIR.exec(text);
      if (!match) {
        return { values, missing: [], error: `cannot read "${text.slice(at)}": write name=value (quote a value with spaces)` };
      }
      const [, name, doubleQuoted, singleQuoted, bare] = match;
      if (!known.has(name)) {
        const takes = args.length ? `it takes ${args.map((a) => a.name).join(', ')}` : 'it takes none';
        return { values, missing: [], error: `unknown argument "${name}": ${takes}` };
      }
      values[name] = doubleQuoted !== undefined ? doubleQuoted.replace(/\\(.)/g, '$1') : singleQuoted ?? bare ?? '';
      at = PAIR.lastIndex;
      while (/\s/.test(text[at] ?? '')) {
        at++;
      }
    }
  }
  for (const name of Object.keys(values)) {
    if (!values[name]) {
      delete values[name];
    }
  }
  return { values, missing: args.filter((a) => a.required && !values[a.name]).map((a) => a.name) };
}
