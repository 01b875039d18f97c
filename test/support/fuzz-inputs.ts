// fast-check arbitraries for hostile input: edge-agent requests broken in one known way (so they
// must be refused), free-form HTTP requests (anything at all), and session updates a hostile
// edge might send. Shared by the fuzz suites; the generators know the contract's shapes and
// limits, so "broken" is broken by construction, not by luck.
import fc from 'fast-check';
import { EDGE_AGENT_ACTIONS, Limits } from '#contracts';

/** A raw HTTP request: method, path, query, content type and body bytes. */
export interface RawRequest {
  method: string;
  path: string;
  contentType?: string;
  body?: string;
}

const hostileString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('', ' ', '\u0000', '../../etc/passwd', 'null', '0', '-1', '1e309', '%00', '\uffff', '😀'),
  fc.string({ unit: fc.constantFrom('a', '\u0000', '/', '.', '%', '\\'), minLength: 1, maxLength: 80 }),
);
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue(), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue(), { maxKeys: 4 }),
);

/** Values no field of the edge-agent request accepts in place of an id, a number or a string. */
const wrongType = fc.oneof(
  fc.integer({ min: -5, max: 5 }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.string(), { maxKeys: 2 }),
);

/** One way to break a valid request such that the contract must refuse it (HTTP 400). */
export type Breakage =
  | { kind: 'unknown_field'; field: string; value: unknown }
  | { kind: 'wrong_type'; field: string; value: unknown }
  | { kind: 'bad_action'; value: string }
  | { kind: 'bad_edge'; value: string }
  | { kind: 'bad_session'; value: string }
  | { kind: 'oversize_text'; bytes: number }
  | { kind: 'drop_required'; field: string };

const KNOWN_FIELDS = new Set([
  'edge_id',
  'action',
  'installation_id',
  'project',
  'session_id',
  'text',
  'skill_id',
  'access_id',
  'directory',
  'working_directory',
  'cursor',
  'model',
  'title',
  'history_page',
  'approval_id',
  'decision',
  'permission_mode',
  'input_id',
  'answers',
  'history_before',
  'attachments',
  'file',
  'client_operation_id',
  'payload_fingerprint',
  'expected_runtime_fence',
  'expected_revision',
  'retry_unknown',
]);

export const breakage: fc.Arbitrary<Breakage> = fc.oneof(
  fc.record({
    kind: fc.constant('unknown_field' as const),
    field: fc
      .string({ minLength: 1, maxLength: 12 })
      .filter((name) => !KNOWN_FIELDS.has(name) && name !== '__proto__'),
    value: fc.jsonValue(),
  }),
  fc
    .record({
      kind: fc.constant('wrong_type' as const),
      field: fc.constantFrom('edge_id', 'action', 'session_id', 'access_id'),
      value: wrongType,
    })
    // edge_id may be a JSON number (a uint64): a positive integer is a real connector id.
    .filter(({ field, value }) => !(field === 'edge_id' && typeof value === 'number' && value > 0)),
  fc.record({
    kind: fc.constant('bad_action' as const),
    value: fc.oneof(
      fc.string().filter((value) => !(EDGE_AGENT_ACTIONS as readonly string[]).includes(value)),
      fc.constantFrom('snapshot', 'expire', 'dispatch_status', 'SEND', 'send '),
    ),
  }),
  fc.record({
    kind: fc.constant('bad_edge' as const),
    value: fc.oneof(
      fc.constantFrom('0', '-1', '18446744073709551616', '1.5', 'abc', '', ' 1'),
      // Leading zeros parse to a real id ("01" is connector 1), so they are not broken ids.
      fc.string().filter((value) => !/^0*[1-9][0-9]{0,19}$/.test(value)),
    ),
  }),
  fc.record({
    kind: fc.constant('bad_session' as const),
    value: fc.oneof(
      fc.constantFrom('null', 'x'.repeat(33), 'x'.repeat(31), 'a'.repeat(31) + '/', 'a'.repeat(31) + '.'),
      fc.string({ maxLength: 31, minLength: 1 }),
    ),
  }),
  fc.record({
    kind: fc.constant('oversize_text' as const),
    bytes: fc.integer({ min: Limits.TEXT_MAX_BYTES + 1, max: Limits.TEXT_MAX_BYTES * 2 }),
  }),
  fc.record({ kind: fc.constant('drop_required' as const), field: fc.constantFrom('edge_id', 'action') }),
);

/** Applies the breakage: every kind is refused for every action (HTTP 400, or 404 for an edge id that parses). */
export function breakRequest(request: Record<string, unknown>, broken: Breakage): Record<string, unknown> {
  const copy = { ...request };
  switch (broken.kind) {
    case 'unknown_field':
      return { ...copy, [broken.field]: broken.value };
    case 'wrong_type':
      return { ...copy, [broken.field]: broken.value };
    case 'bad_action':
      return { ...copy, action: broken.value };
    case 'bad_edge':
      return { ...copy, edge_id: broken.value };
    case 'bad_session':
      return { ...copy, session_id: broken.value };
    case 'oversize_text':
      return { ...copy, text: 'x'.repeat(broken.bytes) };
    case 'drop_required': {
      const { [broken.field]: _dropped, ...rest } = copy;
      return rest;
    }
  }
}

export const anyAction = fc.constantFrom(...EDGE_AGENT_ACTIONS);

const SEGMENT = fc.oneof(
  fc.constantFrom(
    'api',
    'v1',
    'edge-agents',
    'connectors',
    'agent-accesses',
    'sessions',
    'history',
    'events',
    'openapi.json',
    'docs',
    '..',
    '%2e%2e',
    '',
  ),
  fc.string({ maxLength: 40 }).map((value) => encodeURIComponent(value)),
);
const PREFIXES = [
  '/api/v1/edge-agents',
  '/api/v1/edge-agents/connectors',
  '/api/v1/agent-accesses',
  '/api/v1/sessions',
  '/',
];

/** Anything a client could send: the property is only that nothing answers 5xx or dies. */
export const rawRequest: fc.Arbitrary<RawRequest> = fc.record({
  method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'),
  path: fc
    .tuple(
      fc.constantFrom(...PREFIXES),
      fc.array(SEGMENT, { maxLength: 4 }),
      fc.dictionary(fc.string({ maxLength: 10 }), hostileString, { maxKeys: 4 }),
    )
    .map(([prefix, segments, query]) => {
      const path = [prefix.replace(/\/$/, ''), ...segments].join('/') || '/';
      const search = new URLSearchParams(query as Record<string, string>).toString();
      return search ? `${path}?${search}` : path;
    }),
  contentType: fc.option(
    fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=latin1',
    ),
    { nil: undefined },
  ),
  body: fc.option(
    fc.oneof(
      fc.jsonValue().map((value) => JSON.stringify(value)),
      hostileValue.map((value) => JSON.stringify(value) ?? 'undefined'),
      fc.string(),
      fc.constantFrom(
        '{',
        '{"action":',
        '[]',
        'null',
        '"x"',
        '{"__proto__":{"admin":true}}',
        '{"constructor":{"prototype":{}}}',
      ),
    ),
    { nil: undefined },
  ),
});

/** A hostile edge's session update: each field valid, absent or replaced by anything. */
export function hostileUpdate(valid: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  const fields = Object.keys(valid);
  return fc
    .record({
      replace: fc.subarray(fields, { minLength: 1 }),
      values: fc.array(hostileValue, { minLength: fields.length, maxLength: fields.length }),
      extra: fc.option(fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue()), {
        nil: undefined,
      }),
    })
    .map(({ replace, values, extra }) => {
      const update: Record<string, unknown> = { ...valid };
      replace.forEach((field, index) => {
        if (values[index] === null && index % 2 === 0) delete update[field];
        else update[field] = values[index];
      });
      if (extra) update[extra[0]] = extra[1];
      return update;
    });
}
