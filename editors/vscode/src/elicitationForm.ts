// The form of an MCP server's question (agent/elicit's requestedSchema) as
// the questions VS Code asks one by one: its fields in order (required ones
// first), each a pick (yes/no, a choice) or a typed value. No vscode import:
// the unit tests use it.

export type Field =
  | { name: string; title: string; description?: string; required: boolean; kind: 'pick'; options: { label: string; value: unknown }[] }
  | { name: string; title: string; description?: string; required: boolean; kind: 'text' | 'number' | 'integer'; default?: string };

interface Property {
  type?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
  enumNames?: string[];
  oneOf?: { const?: unknown; title?: string }[];
  default?: unknown;
}

export function formFields(schema: Record<string, unknown>): Field[] {
  const properties = (schema.properties ?? {}) as Record<string, Property>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const names = Object.keys(properties).sort((a, b) => Number(required.has(b)) - Number(required.has(a)));
  return names.map((name) => {
    const prop = properties[name] ?? {};
    const base = { name, title: prop.title ?? name, description: prop.description, required: required.has(name) };
    if (prop.type === 'boolean') {
      return { ...base, kind: 'pick' as const, options: [{ label: 'Yes', value: true }, { label: 'No', value: false }] };
    }
    if (prop.enum) {
      return { ...base, kind: 'pick' as const, options: prop.enum.map((value, i) => ({ label: prop.enumNames?.[i] ?? String(value), value })) };
    }
    if (prop.oneOf) {
      return { ...base, kind: 'pick' as const, options: prop.oneOf.map((o) => ({ label: o.title ?? String(o.const), value: o.const })) };
    }
    const kind = prop.type === 'number' || prop.type === 'integer' ? prop.type : 'text';
    return { ...base, kind, default: prop.default === undefined ? undefined : String(prop.default) };
  });
}

/** Why the typed text is not a value of the field (undefined: it is). */
export function invalidValue(field: Field, text: string): string | undefined {
  if (text === '') {
    return field.required ? `${field.title} is required` : undefined;
  }
  if (field.kind === 'number' && !Number.isFinite(Number(text))) {
    return `${field.title} is a number`;
  }
  if (field.kind === 'integer' && !Number.isInteger(Number(text))) {
    return `${field.title} is a whole number`;
  }
  return undefined;
}

export function typedValue(field: Field, text: string): unknown {
  return field.kind === 'number' || field.kind === 'integer' ? Number(text) : text;
}
