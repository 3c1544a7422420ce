// The panel's image requests, done on the extension's side: pick image files
// to attach (a file dialog, each file checked before it reaches the input),
// a transcript thumbnail's bytes (agent/session/file of the shown session),
// and opening a stored image in VS Code's image viewer.

import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { ImageAttachment, checkImage } from './images';
import type { AgentPanel } from './panel';
import type { AgentServer } from './serverLifecycle';
import type { SessionController } from './sessions';

export interface ImageHost {
  readonly panel: AgentPanel;
  readonly server: AgentServer;
  readonly sessions: SessionController;
}

export const IMAGE_EXTENSIONS = ['png', 'jpg', 'jpeg', 'gif', 'webp'];

/** Read and check image files; each problem is said by name, the good ones attached. */
export async function attachImageFiles(host: ImageHost, uris: readonly vscode.Uri[]): Promise<ImageAttachment[]> {
  const attached: ImageAttachment[] = [];
  for (const uri of uris) {
    const name = path.basename(uri.path);
    let bytes: Uint8Array;
    try {
      bytes = await vscode.workspace.fs.readFile(uri);
    } catch (error) {
      void vscode.window.showErrorMessage(`Agent: cannot read the image ${name}: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    const checked = checkImage(name, bytes);
    if ('problem' in checked) {
      void vscode.window.showErrorMessage(`Agent: ${checked.problem}`);
      continue;
    }
    const image = { name, mediaType: checked.mediaType, data: Buffer.from(bytes).toString('base64'), size: bytes.length };
    attached.push(image);
    host.panel.post({ type: 'attachImage', image });
  }
  return attached;
}

/** "Attach Image…": a file dialog; the chosen images go to the panel's input. */
export async function pickImages(host: ImageHost, given?: vscode.Uri[]): Promise<ImageAttachment[]> {
  const uris = given ?? (await vscode.window.showOpenDialog({
    canSelectMany: true,
    openLabel: 'Attach',
    title: 'Attach images to the message',
    filters: { Images: IMAGE_EXTENSIONS },
  }));
  if (!uris?.length) {
    return [];
  }
  await host.panel.show();
  return attachImageFiles(host, uris);
}

/** A transcript thumbnail's bytes, posted to the panel (or why they are not there). */
export async function loadImage(host: ImageHost, file: string): Promise<void> {
  const sessionId = host.sessions.sessionId;
  if (!sessionId) {
    return;
  }
  try {
    const { mediaType, data } = await host.server.serverRequest()('agent/session/file', { sessionId, file });
    host.panel.post({ type: 'imageData', file, url: `data:${mediaType};base64,${data}` });
  } catch (error) {
    host.panel.post({ type: 'imageData', file, error: error instanceof Error ? error.message : String(error) });
  }
}

/** Open a stored image in an editor tab (a copy in the temporary folder, named by its content). */
export async function openImage(host: ImageHost, file: string): Promise<void> {
  const sessionId = host.sessions.sessionId;
  if (!sessionId) {
    return;
  }
  const { data } = await host.server.serverRequest()('agent/session/file', { sessionId, file });
  const target = vscode.Uri.file(path.join(os.tmpdir(), 'agent-lsp-images', path.basename(file)));
  await vscode.workspace.fs.writeFile(target, Buffer.from(data, 'base64'));
  await vscode.commands.executeCommand('vscode.open', target, { preview: true });
}
