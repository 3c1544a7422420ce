import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_IMAGE_BYTES, checkImage, imageLabel, imageUris, messageContent, resentContent, sizeText } from '../src/images';
import { sessionTitle, userText } from '../src/protocol';
import { UserItem, applyEvents, createTranscript } from '../src/transcript';
import { Log } from './events';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');

test('an attached image is checked as the server checks it, and a wrong one is named', () => {
  assert.deepEqual(checkImage('shot.png', PNG), { mediaType: 'image/png' });
  assert.deepEqual(checkImage('photo.jpg', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0])), { mediaType: 'image/jpeg' });
  assert.deepEqual(checkImage('anim', Buffer.from('GIF89a\x01\x00', 'latin1')), { mediaType: 'image/gif' });
  assert.deepEqual(checkImage('logo', Buffer.from('RIFF\x1a\x00\x00\x00WEBPVP8L', 'latin1')), { mediaType: 'image/webp' });
  // the bytes decide, not the name
  assert.deepEqual(checkImage('notes.png', Buffer.from('just text')), {
    problem: 'notes.png is not an image the models take (PNG, JPEG, GIF or WebP)',
  });
  assert.deepEqual(checkImage('empty.png', new Uint8Array()), { problem: 'empty.png is empty, not an image' });
  const huge = new Uint8Array(MAX_IMAGE_BYTES + 1);
  huge.set(PNG.subarray(0, 8));
  assert.deepEqual(checkImage('huge.png', huge), {
    problem: 'huge.png is 5.0 MB, over the limit of 5.0 MB per image; make it smaller',
  });
  assert.equal(sizeText(6 * 1024 * 1024), '6.0 MB');
  assert.equal(imageLabel({ name: 'shot.png', size: 12_345 }), 'shot.png · 12 KB');
  // dragged from the explorer: the image files of the drop's URI list, not its other files
  assert.deepEqual(imageUris('# from the explorer\r\nfile:///ws/shot.PNG\r\nfile:///ws/notes.txt\r\nfile:///ws/a.jpeg'),
    ['file:///ws/shot.PNG', 'file:///ws/a.jpeg']);
});

test('a message with images is sent as its text and an image block each; without, as its text', () => {
  const image = { name: 'shot.png', mediaType: 'image/png', data: PNG.toString('base64'), size: PNG.length };
  assert.equal(messageContent('why is this red?', []), 'why is this red?');
  assert.deepEqual(messageContent('why is this red?', [image]), [
    { type: 'text', text: 'why is this red?' },
    { type: 'image', data: image.data, mediaType: 'image/png', name: 'shot.png' },
  ]);
  assert.deepEqual(messageContent('', [image]), [{ type: 'image', data: image.data, mediaType: 'image/png', name: 'shot.png' }]);
  // sent again (a retry): the references of the images the session keeps
  assert.equal(resentContent('why?', []), 'why?');
  assert.deepEqual(resentContent('why?', [{ file: 'ab12.png', name: 'shot.png', mediaType: 'image/png', size: 70 }]), [
    { type: 'text', text: 'why?' },
    { type: 'image', file: 'ab12.png', name: 'shot.png' },
  ]);
});

test("a user message's stored images are its item's images, and their placeholders are not its text", () => {
  const log = new Log();
  const content = [
    { type: 'text', text: 'what is this?' },
    { type: 'text', text: '[image: shot.png, image/png, 70 B]' },
    { type: 'image', mediaType: 'image/png', file: 'ab12.png', name: 'shot.png', size: 70 },
    { type: 'text', text: '[image: image/gif, 35 B]' },
    { type: 'image', mediaType: 'image/gif', file: 'cd34.gif', size: 35 },
  ];
  log.add('turn/start', { turn: 1 });
  log.add('user/message', { turn: 1, step: 1, message: { role: 'user', id: 'm1', source: 'user', content } });
  const state = createTranscript('s1');
  applyEvents(state, log.events);
  const user = state.items.find((i) => i.kind === 'user') as UserItem;
  assert.equal(user.text, 'what is this?');
  assert.deepEqual(user.images, [
    { file: 'ab12.png', name: 'shot.png', mediaType: 'image/png', size: 70 },
    { file: 'cd34.gif', name: null, mediaType: 'image/gif', size: 35 },
  ]);
  assert.equal(userText({ content: content as any }), 'what is this?');
  assert.equal(sessionTitle('what is this?'), 'what is this?');
});
