// agent/elicit: an MCP server asks the user something while the agent works.
// A modal shows the question (Answer / Decline; closing it cancels), then each
// field of the form is a quick pick (yes/no, a choice) or an input box; an
// optional field may be left empty, and Escape on any of them cancels.

import * as vscode from 'vscode';
import { ElicitParams, ElicitResult } from './protocol';
import { formFields, invalidValue, typedValue } from './elicitationForm';

const LEAVE_OUT = '(leave out)';

export async function askElicitation(params: ElicitParams): Promise<ElicitResult> {
  const fields = formFields(params.requestedSchema ?? {});
  const start = fields.length ? 'Answer' : 'Accept';
  const picked = await vscode.window.showInformationMessage(
    `The MCP server '${params.server}' asks: ${params.message}`,
    { modal: true },
    start,
    'Decline',
  );
  if (picked === undefined) {
    return { action: 'cancel' };
  }
  if (picked === 'Decline') {
    return { action: 'decline' };
  }
  const content: Record<string, unknown> = {};
  for (const field of fields) {
    const title = `${params.server}: ${field.title}`;
    if (field.kind === 'pick') {
      const items = field.options.map((o) => ({ label: o.label, value: o.value }));
      const choice = await vscode.window.showQuickPick(
        field.required ? items : [...items, { label: LEAVE_OUT, value: undefined }],
        { title, placeHolder: field.description, ignoreFocusOut: true },
      );
      if (choice === undefined) {
        return { action: 'cancel' };
      }
      if (choice.label !== LEAVE_OUT) {
        content[field.name] = choice.value;
      }
      continue;
    }
    const text = await vscode.window.showInputBox({
      title,
      prompt: field.description,
      value: field.default,
      ignoreFocusOut: true,
      validateInput: (value) => invalidValue(field, value),
    });
    if (text === undefined) {
      return { action: 'cancel' };
    }
    if (text !== '') {
      content[field.name] = typedValue(field, text);
    }
  }
  return { action: 'accept', content };
}
