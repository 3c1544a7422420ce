// The images of a user's message in the transcript: a thumbnail each, its
// bytes asked of the extension once (agent/session/file) and kept; clicking
// one opens it in an editor tab. Until the bytes come, and when they cannot
// (the file is gone), a chip with the name and size stands in.

import type { StoredImage } from '../images';
import { imageLabel } from '../images';
import type { Item } from '../transcript';
import { el, post } from './dom';
import { view } from './view';

const loaded = new Map<string, { url?: string; error?: string }>();
const asked = new Set<string>();

/** The thumbnails of a user message's images, appended to its node. */
export function renderImages(node: HTMLElement, images: StoredImage[]): void {
  if (!images.length) {
    return;
  }
  const strip = el('div', 'message-images');
  for (const image of images) {
    const got = loaded.get(image.file);
    const label = imageLabel(image);
    let shown: HTMLElement;
    if (got?.url) {
      const img = el('img', 'message-image') as HTMLImageElement;
      img.src = got.url;
      img.alt = image.name ?? 'image';
      shown = img;
    } else {
      shown = el('span', 'image-chip', got?.error ? `${label} (not available: ${got.error})` : label);
      if (!asked.has(image.file)) {
        asked.add(image.file);
        post({ type: 'loadImage', file: image.file });
      }
    }
    shown.title = `${label}: click to open`;
    shown.tabIndex = 0;
    shown.setAttribute('role', 'button');
    const open = () => post({ type: 'openImage', file: image.file });
    shown.addEventListener('click', open);
    shown.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        open();
      }
    });
    strip.append(shown);
  }
  node.append(strip);
}

/** The extension's answer for one image: the user messages holding it are drawn again. */
export function imageArrived(file: string, url: string | undefined, error: string | undefined): void {
  loaded.set(file, { url, error });
  for (const item of view.state.items as Item[]) {
    if (item.kind === 'user' && item.images.some((i) => i.file === file)) {
      item.rev = ++view.state.rev;
    }
  }
}

/** Another session: its images are asked for again (a file name is per session). */
export function forgetImages(): void {
  loaded.clear();
  asked.clear();
}
