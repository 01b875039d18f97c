// The committed event contract (docs/events/) is what the code generates, and it says what
// consumers rely on: unknown fields allowed, the known types listed, the id and order fields.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { LIFECYCLE_EVENT_TYPES } from '../../libs/contracts/src/internal.js';
import { generatedFiles, lifecycleEventJsonSchema, SCHEMA_FILE } from './contract.js';

const EVENT = {
  v: 1,
  id: '0123456789abcdef0123456789abcdef:e1:3:turn.completed',
  type: 'turn.completed',
  session_id: '0123456789abcdef0123456789abcdef',
  edge_id: '42',
  actor_id: 'user-7',
  at: 1767225600000,
  epoch: 'e1',
  sequence: 3,
  data: { status: 'ok', turn_timing: { dispatch_ms: 4, first_reply_ms: null, finished_ms: 52 } },
};

test('the committed JSON Schema and AsyncAPI document match the code (npm run events:generate)', () => {
  for (const [file, text] of Object.entries(generatedFiles())) {
    expect([file, readFileSync(join(process.cwd(), file), 'utf8')]).toEqual([file, text]);
  }
});

test('the schema accepts an event with fields added later and refuses a broken one', () => {
  const validate = new Ajv({ strict: false }).compile(lifecycleEventJsonSchema());
  expect(validate(EVENT)).toBe(true);
  expect(validate({ ...EVENT, added_later: { x: 1 }, data: { ...EVENT.data, also_new: true } })).toBe(true);
  expect(validate({ ...EVENT, sequence: 0 })).toBe(false);
  expect(validate({ ...EVENT, v: 2 })).toBe(false);
  const { id: _id, ...withoutId } = EVENT;
  expect(validate(withoutId)).toBe(false);
  const schema = JSON.parse(readFileSync(join(process.cwd(), SCHEMA_FILE), 'utf8')) as {
    properties: { type: { enum: string[] } };
  };
  expect(schema.properties.type.enum).toEqual([...LIFECYCLE_EVENT_TYPES]);
});
