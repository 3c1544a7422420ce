// An image in a message, driven by scripts/vscode_run.mjs (mode "daily",
// from ui_daily.mjs): the installed .vsix in code-server, the real server,
// the scripted model.
//
// 1. A PNG pasted into the input (a clipboard paste holding an image file, as
//    a screenshot tool leaves it) becomes a chip with its thumbnail, name and
//    size; the typed text stays as it was.
// 2. A file that is not an image, dropped on the input, is refused with a
//    message naming it under the input; the chip stays, and the drag stayed
//    the panel's (VS Code's webview host did not take it).
// 3. Sent: the model's request holds the image (the scripted model answers
//    only such a request), the session keeps it once beside its log
//    (<id>.files/, the same bytes) and its user message refers to it, and the
//    user's bubble shows the image as a thumbnail.
// 4. Clicking the thumbnail opens the image in an editor tab.

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

// The reply is taken only by a request whose last user message holds the image
// (the server puts this line before the image block it sends).
export const imagesScript = [{ when: `IMAGE-D what is in this picture?[image: image.png, image/png, ${png().length} B]`, text: 'A red square with a blue stripe.' }];

/** A small PNG (RGB, 8 bits): `width`×`height`, red with a blue stripe. */
export function png(width = 24, height = 16) {
  const chunk = (type, data) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  const rows = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3); // filter byte 0, then the pixels
    for (let x = 0; x < width; x++) row.set(y >= 6 && y < 10 ? [0, 0, 255] : [255, 0, 0], 1 + x * 3);
    rows.push(row);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Paste a file into the panel's input the way the browser does: a paste event
 * whose clipboard holds it. Whether the panel took it (the paste's default prevented). */
function paste(panel, file) {
  return panel.evaluate(({ name, type, base64 }) => {
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const clipboard = new DataTransfer();
    clipboard.items.add(new File([bytes], name, { type }));
    const event = new ClipboardEvent('paste', { clipboardData: clipboard, bubbles: true, cancelable: true });
    document.querySelector('#input').dispatchEvent(event);
    return event.defaultPrevented;
  }, file);
}

/** Drag a file onto the panel's input and drop it, with the events a drag from
 * the desktop brings the webview (dragenter, dragover, drop). Whether the panel
 * took the drop (its default prevented). */
function drop(panel, file) {
  return panel.evaluate(({ name, type, base64 }) => {
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const data = new DataTransfer();
    data.items.add(new File([bytes], name, { type }));
    const target = document.querySelector('#input');
    for (const type of ['dragenter', 'dragover']) target.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
    const event = new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true });
    target.dispatchEvent(event);
    return event.defaultPrevented;
  }, file);
}

/** The `user/message` events of the session logs under `sessionsDir` that hold an image. */
function imageMessages(sessionsDir) {
  const found = [];
  for (const dir of fs.readdirSync(sessionsDir)) {
    const folder = path.join(sessionsDir, dir);
    if (!fs.statSync(folder).isDirectory()) continue;
    for (const name of fs.readdirSync(folder).filter((f) => f.endsWith('.jsonl'))) {
      const log = path.join(folder, name);
      for (const line of fs.readFileSync(log, 'utf8').split('\n')) {
        if (!line.includes('"user/message"')) continue;
        const event = JSON.parse(line);
        const content = event.data?.message?.content;
        const images = Array.isArray(content) ? content.filter((b) => b?.type === 'image') : [];
        if (event.type === 'user/message' && images.length) found.push({ log, content, images });
      }
    }
  }
  return found;
}

/** The size VS Code's image preview shows its picture at, once it has loaded it (or null). */
async function imageViewer(page, timeoutMs) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    for (const frame of page.frames()) {
      const size = await frame.evaluate(() => {
        if (document.body?.classList.contains('error') && document.querySelector('.image-load-error')) return 'error';
        const img = document.querySelector('body.ready > img');
        return img?.naturalWidth ? `${img.naturalWidth}×${img.naturalHeight}` : null;
      }).catch(() => null);
      if (size === 'error') return null;
      if (size) return size;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return null;
}

export async function images(page, { panel, sessionsDir, log, shot }) {
  const image = png();
  const pasted = { name: 'image.png', type: 'image/png', base64: image.toString('base64') };
  const size = `${image.length} B`;

  // 1. Paste into the input while writing the message.
  await panel.fill('#input', 'IMAGE-D what is in this picture?');
  if (!(await paste(panel, pasted))) throw new Error('the panel did not take the pasted image (the paste went on as text)');
  const chip = await panel.waitForSelector(`#attachments:not([hidden]) .image-chip:has-text("image.png · ${size}")`, { timeout: 10000 });
  await panel.waitForFunction(() => document.querySelector('#attachments .image-chip-thumb')?.naturalWidth === 24, null, { timeout: 5000 });
  if (!(await chip.$('button[aria-label="Remove image.png"]'))) throw new Error('the chip has no button to remove the image');
  const text = await panel.inputValue('#input');
  if (text !== 'IMAGE-D what is in this picture?') throw new Error(`pasting the image changed the input: ${JSON.stringify(text)}`);
  log(`a pasted PNG shows as a chip "image.png · ${size}" with its thumbnail; the text is untouched`);

  // 2. A file that is not an image, dropped: refused by name, the image stays.
  const notes = { name: 'notes.txt', type: 'text/plain', base64: Buffer.from('just some notes\n').toString('base64') };
  if (!(await drop(panel, notes))) throw new Error('the panel let the browser handle the dropped file');
  const refused = await panel.waitForSelector('#attachments .attach-error', { timeout: 10000 });
  const why = await refused.textContent();
  if (!why.includes('notes.txt') || !/not an image/.test(why)) throw new Error(`the refusal does not say which file or why: ${JSON.stringify(why)}`);
  if ((await panel.$$('#attachments .image-chip')).length !== 1) throw new Error('the refused file changed the attached images');
  // VS Code's webview host takes a file drag the webview lets reach its window (it stops the
  // panel's pointer events for the rest of the drag, and a real drop then lands in the workbench).
  const blocked = await (await panel.parentFrame().frameElement()).evaluate((frame) => frame.style.pointerEvents);
  if (blocked === 'none') throw new Error("the drag over the panel reached VS Code's webview host, which took it from the panel");
  await shot(page, 'image-attached');
  log(`a dropped text file is refused under the input: "${why}"`);

  // 3. Send: stored once beside the session log, answered, shown in the bubble.
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('.assistant:has-text("A red square with a blue stripe.")', { timeout: 20000 });
  await panel.waitForSelector('#attachments', { state: 'hidden', timeout: 5000 });
  const bubble = '.user:has-text("IMAGE-D what is in this picture?")';
  const thumb = await panel.waitForSelector(`${bubble} img.message-image`, { timeout: 10000 });
  await panel.waitForFunction((img) => img.naturalWidth === 24, thumb, { timeout: 5000 });
  const title = await thumb.getAttribute('title');
  if (!title?.startsWith(`image.png · ${size}`)) throw new Error(`the thumbnail's title is ${JSON.stringify(title)}`);
  const bubbleText = await panel.$eval(`${bubble} .user-text`, (n) => n.textContent);
  if (bubbleText !== 'IMAGE-D what is in this picture?') throw new Error(`the bubble's text is ${JSON.stringify(bubbleText)}`);

  const messages = imageMessages(sessionsDir);
  if (messages.length !== 1) throw new Error(`${messages.length} user messages with images in the session logs`);
  const [{ log: sessionLog, images: blocks }] = messages;
  if (blocks.length !== 1) throw new Error(`the message holds ${blocks.length} images: ${JSON.stringify(blocks)}`);
  const [block] = blocks;
  if (block.mediaType !== 'image/png' || block.name !== 'image.png' || block.size !== image.length || 'data' in block) {
    throw new Error(`the stored message's image block: ${JSON.stringify(block)}`);
  }
  const digest = crypto.createHash('sha256').update(image).digest('hex');
  if (block.file !== `${digest}.png`) throw new Error(`the image is stored as ${block.file}, not by its content`);
  const stored = path.join(sessionLog.replace(/\.jsonl$/, '.files'), block.file);
  if (!fs.existsSync(stored) || !fs.readFileSync(stored).equals(image)) throw new Error(`${stored} does not hold the pasted bytes`);
  if (fs.readFileSync(sessionLog, 'utf8').includes(pasted.base64)) throw new Error("the session log holds the image's bytes, not a reference");
  await shot(page, 'image-sent');
  log(`sent: the model's request held the image (it answered), the bubble shows the thumbnail, the session keeps the image once (${path.basename(path.dirname(stored))}/${block.file.slice(0, 12)}….png)`);

  // 4. Clicking the thumbnail opens the image in an editor tab.
  await thumb.click();
  await page.waitForSelector(`.tabs-container .tab:has-text("${block.file}")`, { timeout: 15000 });
  const shown = await imageViewer(page, 15000);
  if (!shown) throw new Error("the opened tab does not show the image (VS Code's image preview has no picture of it)");
  await shot(page, 'image-opened');
  log(`clicking the thumbnail opened the image in an editor tab (${shown})`);
}
