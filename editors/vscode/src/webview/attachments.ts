// The images attached to the message being written: pasted into the input or
// dropped on the panel, or chosen with "+ image" (the extension's file dialog). Each is
// checked as the server checks it before it is kept, a wrong one named under
// the input; each shows as a chip (thumbnail, name and size, × removes it)
// until the message is sent. A message the server refuses gives them back.

import { ImageAttachment, checkImage, imageLabel, imageUris } from '../images';
import { $, button, el, post } from './dom';

const row = $('attachments');
let pending: ImageAttachment[] = [];
let problem: string | null = null;

function base64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

function render(): void {
  row.replaceChildren();
  pending.forEach((image, index) => {
    const chip = el('span', 'image-chip');
    chip.title = imageLabel(image);
    const thumb = el('img', 'image-chip-thumb') as HTMLImageElement;
    thumb.src = `data:${image.mediaType};base64,${image.data}`;
    thumb.alt = image.name;
    chip.append(thumb, el('span', 'image-chip-label', imageLabel(image)),
      button('×', 'icon', () => remove(index), `Remove ${image.name}`));
    row.append(chip);
  });
  if (problem) {
    row.append(el('div', 'attach-error', problem));
  }
  row.hidden = !pending.length && !problem;
}

function remove(index: number): void {
  pending.splice(index, 1);
  problem = null;
  render();
}

/** Keep an image the extension read (or a refused message gave back). */
export function addImage(image: ImageAttachment): void {
  pending.push(image);
  problem = null;
  render();
}

/** Read, check and keep image files the user pasted or dropped. */
export async function addFiles(files: File[]): Promise<void> {
  for (const file of files) {
    const bytes = new Uint8Array(await file.arrayBuffer());
    const name = file.name || `pasted image ${pending.length + 1}`;
    const checked = checkImage(name, bytes);
    if ('problem' in checked) {
      problem = checked.problem;
      render();
      continue;
    }
    addImage({ name, mediaType: checked.mediaType, data: base64(bytes), size: bytes.length });
  }
}

/** The attached images, handed over with the message being sent. */
export function takeImages(): ImageAttachment[] {
  const taken = pending;
  pending = [];
  problem = null;
  render();
  return taken;
}

export function hasImages(): boolean {
  return pending.length > 0;
}

function imageFiles(list: DataTransferItemList | null | undefined): File[] {
  return Array.from(list ?? []).filter((item) => item.kind === 'file').map((item) => item.getAsFile()).filter((f): f is File => !!f);
}

/** Whether a drag carries files (from the system, or VS Code's explorer with Shift held). */
function carriesFiles(e: DragEvent): boolean {
  const types = Array.from(e.dataTransfer?.types ?? []);
  return types.includes('Files') || types.includes('text/uri-list');
}

/** Pasting a file into the input, or dropping one anywhere on the panel, attaches it
 * (text pastes stay text). A file drag over the panel stays the panel's: VS Code's
 * webview host, seeing it reach the webview's window, would stop the panel's pointer
 * events for the rest of the drag (so the drop would land in the workbench, which
 * opens the file) unless Shift is held. */
export function listen(input: HTMLTextAreaElement, dropZone: HTMLElement): void {
  input.addEventListener('paste', (e) => {
    const files = imageFiles(e.clipboardData?.items);
    if (files.length) {
      e.preventDefault();
      void addFiles(files);
    }
  });
  for (const type of ['dragenter', 'dragover'] as const) {
    document.addEventListener(type, (e) => {
      if (carriesFiles(e)) {
        e.preventDefault();
        e.stopPropagation();
        dropZone.classList.add('dropping');
      }
    });
  }
  document.addEventListener('dragleave', (e) => {
    if (!e.relatedTarget) {
      dropZone.classList.remove('dropping'); // left the panel
    }
  });
  document.addEventListener('drop', (e) => {
    dropZone.classList.remove('dropping');
    if (!carriesFiles(e)) {
      return;
    }
    e.preventDefault();
    e.stopPropagation();
    const files = Array.from(e.dataTransfer?.files ?? []);
    // Files dragged from VS Code's explorer (Shift held) come as their URIs: the extension reads them.
    const uris = files.length ? [] : imageUris(e.dataTransfer?.getData('text/uri-list') ?? '');
    if (files.length) {
      void addFiles(files);
    } else if (uris.length) {
      post({ type: 'attachUris', uris });
    }
  });
  $('attach-image').addEventListener('click', () => post({ type: 'pickImage' }));
}
