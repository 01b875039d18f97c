import { result, type EdgeAgentResult } from './edge-agent.js';
import { encodeWire, toWire } from './wire.js';

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** A result holding every kind of default value beside two that are not. */
const DEFAULTS: EdgeAgentResult = {
  version: 1,
  status: 'ok',
  running: false,
  title: '',
  messages: [],
  revision: 0,
  session_id: undefined,
  model: 'gpt-5',
  closed: true,
};

describe('toWire', () => {
  it('omits false, empty strings, empty arrays, 0, null and undefined', () => {
    const value = DEFAULTS;
    expect(toWire(value)).toEqual({ version: 1, status: 'ok', model: 'gpt-5', closed: true });
    expect(Object.keys(toWire(value))).not.toContain('session_id');
  });

  it('keeps 0 for turn timing values, exit_code and request_service_ms, and drops their nulls', () => {
    const value = result('ok', {
      turn_timing: { dispatch_ms: 0, first_reply_ms: null, finished_ms: 12 },
      activities: [{ id: 'a', kind: 'command', exit_code: 0, duration_ms: 0 }],
      request_service_ms: 0,
    });
    expect(toWire(value)).toEqual({
      version: 1,
      status: 'ok',
      turn_timing: { dispatch_ms: 0, finished_ms: 12 },
      activities: [{ id: 'a', kind: 'command', exit_code: 0 }],
      request_service_ms: 0,
    });
    expect(toWire(result('ok', { request_service_ms: null }))).toEqual({ version: 1, status: 'ok' });
  });

  it('recurses into nested objects and arrays, keeping their order', () => {
    const value = result('ok', {
      messages: [
        { role: 'user', text: 'hi', attachments: [{ name: 'a.png', size: 0, directory: false }] },
        { role: 'assistant', text: '' },
      ],
      file: { name: 'x', path: '', size: 5 },
    });
    expect(toWire(value)).toEqual({
      version: 1,
      status: 'ok',
      messages: [{ role: 'user', text: 'hi', attachments: [{ name: 'a.png' }] }, { role: 'assistant' }],
      file: { name: 'x', size: 5 },
    });
  });

  it('leaves scalars and the input untouched', () => {
    expect(toWire(5)).toBe(5);
    expect(toWire('')).toBe('');
    const value = result('ok', { running: false });
    toWire(value);
    expect(value.running).toBe(false);
  });
});

describe('encodeWire', () => {
  it('writes the bytes of JSON.stringify(toWire(value))', () => {
    const values: unknown[] = [
      DEFAULTS,
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
    for (const value of values) expect(text(encodeWire(value))).toBe(JSON.stringify(toWire(value)));
  });

  it('leaves the input untouched', () => {
    const value = result('ok', { running: false, messages: [] });
    encodeWire(value);
    expect(value).toEqual({ version: 1, status: 'ok', running: false, messages: [] });
  });
});
