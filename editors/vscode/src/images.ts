// Images in messages, kept pure so they are tested without VS Code or a DOM:
// the check an attached image gets before it is sent (the server's own: PNG,
// JPEG, GIF or WebP by its bytes, at most 5 MB), the content blocks a message
// with images is sent as, and the stored images a transcript's user message
// refers to (`{type: "image", mediaType, file, name?, size}`, whose bytes
// `agent/session/file` gives).

/** The smallest provider limit per image, as the server checks it. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** An image attached to the message being written. */
export interface ImageAttachment {
  name: string;
  mediaType: string;
  /** base64 */
  data: string;
  size: number;
}

/** A stored image a user message refers to. */
export interface StoredImage {
  file: string;
  name: string | null;
  mediaType: string;
  size: number | null;
}

/** `12 KB`, as the server writes sizes. */
export function sizeText(size: number): string {
  if (size < 1024) {
    return `${size} B`;
  }
  if (size < 1024 * 1024) {
    return `${Math.round(size / 1024)} KB`;
  }
  return `${(size / (1024 * 1024)).toFixed(1)} MB`;
}

/** The media type the bytes' header says, if one the models take. */
export function mediaTypeOf(bytes: Uint8Array): string | null {
  const at = (i: number) => bytes[i];
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (bytes.length >= 8 && at(0) === 0x89 && ascii(1, 8) === 'PNG\r\n\x1a\n') {
    return 'image/png';
  }
  if (bytes.length >= 3 && at(0) === 0xff && at(1) === 0xd8 && at(2) === 0xff) {
    return 'image/jpeg';
  }
  if (bytes.length >= 6 && (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a')) {
    return 'image/gif';
  }
  if (bytes.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') {
    return 'image/webp';
  }
  return null;
}

/** The media type of an image that may be sent, or what is wrong with it, naming it. */
export function checkImage(name: string, bytes: Uint8Array): { mediaType: string } | { problem: string } {
  if (bytes.length === 0) {
    return { problem: `${name} is empty, not an image` };
  }
  if (bytes.length > MAX_IMAGE_BYTES) {
    return { problem: `${name} is ${sizeText(bytes.length)}, over the limit of 5.0 MB per image; make it smaller` };
  }
  const mediaType = mediaTypeOf(bytes);
  return mediaType ? { mediaType } : { problem: `${name} is not an image the models take (PNG, JPEG, GIF or WebP)` };
}

/** The content of a message: its text alone, or the text and image blocks. */
export function messageContent(text: string, images: ImageAttachment[]): string | { type: string; [k: string]: unknown }[] {
  if (!images.length) {
    return text;
  }
  const blocks: { type: string; [k: string]: unknown }[] = text ? [{ type: 'text', text }] : [];
  for (const image of images) {
    blocks.push({ type: 'image', data: image.data, mediaType: image.mediaType, name: image.name });
  }
  return blocks;
}

/** The content of a message of the transcript sent again (a retry): its text and
 * the references of its images, which the server reads from the session's files. */
export function resentContent(text: string, images: StoredImage[]): string | { type: string; [k: string]: unknown }[] {
  if (!images.length) {
    return text;
  }
  return [{ type: 'text', text }, ...images.map((i) => ({ type: 'image', file: i.file, ...(i.name ? { name: i.name } : {}) }))];
}

/** The image files of a drop's `text/uri-list` (files dragged from VS Code's explorer). */
export function imageUris(uriList: string): string[] {
  return uriList
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#') && /\.(png|jpe?g|gif|webp)$/i.test(line));
}

interface Block {
  type?: string;
  text?: string | null;
  [k: string]: unknown;
}

function isStoredImage(block: Block | undefined): boolean {
  return !!block && block.type === 'image' && typeof block.file === 'string';
}

/** The blocks without the placeholder text the server writes before each image it stored. */
export function withoutImagePlaceholders<T extends Block>(blocks: T[]): T[] {
  return blocks.filter((b, i) => !(b?.type === 'text' && isStoredImage(blocks[i + 1])));
}

/** The stored images of a user message's content. */
export function storedImages(content: Block[] | string | null | undefined): StoredImage[] {
  if (!Array.isArray(content)) {
    return [];
  }
  return content.filter(isStoredImage).map((b) => ({
    file: String(b.file),
    name: typeof b.name === 'string' ? b.name : null,
    mediaType: typeof b.mediaType === 'string' ? b.mediaType : 'image/png',
    size: typeof b.size === 'number' ? b.size : null,
  }));
}

/** `shot.png · 12 KB`: what a chip or a thumbnail's title says. */
export function imageLabel(image: { name: string | null; size: number | null; file?: string }): string {
  const name = image.name ?? image.file ?? 'image';
  return image.size != null ? `${name} · ${sizeText(image.size)}` : name;
}
