import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formFields, invalidValue, typedValue } from '../src/elicitationForm';

const schema = {
  type: 'object',
  properties: {
    note: { type: 'string', description: 'anything else' },
    size: { type: 'integer', title: 'Size' },
    sure: { type: 'boolean' },
    colour: { type: 'string', enum: ['r', 'g'], enumNames: ['Red', 'Green'] },
  },
  required: ['sure', 'size'],
};

test('required fields are asked first, each as a pick or a typed value', () => {
  const fields = formFields(schema);
  assert.deepEqual(fields.map((f) => [f.name, f.kind, f.required]), [
    ['size', 'integer', true],
    ['sure', 'pick', true],
    ['note', 'text', false],
    ['colour', 'pick', false],
  ]);
  const colour = fields[3];
  assert.ok(colour.kind === 'pick');
  assert.deepEqual(colour.options, [{ label: 'Red', value: 'r' }, { label: 'Green', value: 'g' }]);
});

test('typed values are checked and converted', () => {
  const [size, , note] = formFields(schema);
  assert.equal(invalidValue(size, ''), 'Size is required');
  assert.equal(invalidValue(size, '2.5'), 'Size is a whole number');
  assert.equal(invalidValue(size, '3'), undefined);
  assert.equal(typedValue(size, '3'), 3);
  assert.equal(invalidValue(note, ''), undefined);
  assert.equal(typedValue(note, 'hi'), 'hi');
});
