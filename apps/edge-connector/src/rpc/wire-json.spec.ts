import { result, toWire } from '#contracts';
import { encodeJson } from '#messaging';
import { encodeWire } from './wire-json.js';

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe('encodeWire', () => {
  it('writes the same bytes as encodeJson(toWire(value))', () => {
    const values: unknown[] = [
      result('ok', {
        running: false,
        title: '',
        messages: [],
        revision: 0,
        session_id: undefined,
        model: 'gpt-5',
        closed: true,
      }),
      result('ok', {
        turn_timing: { dispatch_ms: 0, first_reply_ms: null, finished_ms: 12 },
        activities: [{ id: 'a', kind: 'command', exit_code: 0, duration_ms: 0 }],
        request_service_ms: 0,
      }),
      result('ok', {
        messages: [
          { role: 'user', text: 'hi', attachments: [{ name: 'a.png', size: 0, directory: false }] },
          { role: 'assistant', text: '' },
        ],
        file: { name: 'x', path: '', size: 5 },
      }),
      { list: [0, '', false, null, [], { a: 0, b: [] }], nested: { deeper: { zero: 0, one: 1 } } },
      { version: 1, status: 'ok', title: 'ünïcödé ✓', text: 'line\nbreak "quoted"' },
      [],
      [{ a: 0 }, 0],
      0,
      '',
      false,
      null,
      'plain',
    ];
    for (const value of values) expect(text(encodeWire(value))).toBe(text(encodeJson(toWire(value))));
  });

  it('leaves the input untouched', () => {
    const value = result('ok', { running: false, messages: [] });
    encodeWire(value);
    expect(value).toEqual({ version: 1, status: 'ok', running: false, messages: [] });
  });
});
