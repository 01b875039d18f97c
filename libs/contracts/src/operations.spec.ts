import { createHash } from 'node:crypto';
import { canonicalJson, operationFingerprint } from './operations.js';
import { edgeAgentRequestSchema, edgeAgentRpcRequestSchema } from './schemas.js';
import { validateEdgeAgentRequest, validateRpcEnvelope } from './validation.js';
import type { EdgeAgentRequest, EdgeAgentRPCRequest } from './edge-agent.js';

const SESSION = '7c1e5a9b2d4f6e8a0c3b5d7f9e1a2c4b';
const OPERATION_ID = `${Date.now()}-0123456789abcdef0123456789abcdef`;

describe('canonicalJson', () => {
  it('sorts keys at every depth and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[2,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('drops undefined keys, so an omitted field equals an explicit undefined', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe(canonicalJson({ a: 1 }));
  });

  it('writes undefined inside arrays and at the top as null', () => {
    expect(canonicalJson([1, undefined])).toBe('[1,null]');
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('compares keys by UTF-16 code units, not locale', () => {
    expect(canonicalJson({ a: 1, B: 2, é: 3 })).toBe('{"B":2,"a":1,"é":3}');
  });
});

describe('operationFingerprint', () => {
  const send: EdgeAgentRequest = { edge_id: '1', action: 'send', session_id: SESSION, text: 'hi' };

  it('is the sha256 of {method, sessionId, fields}', () => {
    const expected = createHash('sha256')
      .update(`{"fields":{"text":"hi"},"method":"edgeAgent.send","sessionId":"${SESSION}"}`)
      .digest('hex');
    expect(operationFingerprint('send', send)).toBe(expected);
  });

  it('ignores routing and envelope fields but not the payload', () => {
    const base = operationFingerprint('send', send);
    expect(
      operationFingerprint('send', {
        ...send,
        access_id: '3f2a9c6b8d1e4f7a0b5c2d9e8f1a6b3c',
        client_operation_id: OPERATION_ID,
        expected_runtime_fence: 3,
      }),
    ).toBe(base);
    expect(operationFingerprint('send', { ...send, text: 'hi!' })).not.toBe(base);
    expect(operationFingerprint('send', { ...send, session_id: SESSION.replace('7', '8') })).not.toBe(base);
  });
});

describe('envelope validation', () => {
  const fingerprint = 'a'.repeat(64);
  const send: EdgeAgentRequest = { edge_id: '1', action: 'send', session_id: SESSION, text: 'hi' };

  it('accepts the envelope on a mutating action', () => {
    const verdict = validateEdgeAgentRequest({
      ...send,
      client_operation_id: OPERATION_ID,
      payload_fingerprint: fingerprint,
      expected_runtime_fence: 1,
    });
    expect(verdict).toEqual({ ok: true });
  });

  it.each<[string, Partial<EdgeAgentRequest>]>([
    ['id without fingerprint', { client_operation_id: OPERATION_ID }],
    ['fingerprint without id', { payload_fingerprint: fingerprint }],
    ['upper-case fingerprint', { client_operation_id: OPERATION_ID, payload_fingerprint: 'A'.repeat(64) }],
    ['short fingerprint', { client_operation_id: OPERATION_ID, payload_fingerprint: 'a'.repeat(63) }],
    ['blank id', { client_operation_id: '  ', payload_fingerprint: fingerprint }],
    ['id with a control char', { client_operation_id: 'a\u0000b', payload_fingerprint: fingerprint }],
    [
      'zero fence',
      { client_operation_id: OPERATION_ID, payload_fingerprint: fingerprint, expected_runtime_fence: 0 },
    ],
    ['fence alone', { expected_runtime_fence: 2 }],
    [
      'expected_revision on send',
      { client_operation_id: OPERATION_ID, payload_fingerprint: fingerprint, expected_revision: 1 },
    ],
    ['retry_unknown without the envelope', { retry_unknown: true }],
  ])('refuses %s', (_name, fields) => {
    expect(validateEdgeAgentRequest({ ...send, ...fields }).ok).toBe(false);
  });

  it('takes retry_unknown on send only, outside the fingerprint', () => {
    const enveloped = {
      client_operation_id: OPERATION_ID,
      payload_fingerprint: fingerprint,
      retry_unknown: true,
    };
    expect(validateEdgeAgentRequest({ ...send, ...enveloped })).toEqual({ ok: true });
    expect(validateEdgeAgentRequest({ ...send, action: 'interrupt', text: undefined, ...enveloped }).ok).toBe(
      false,
    );
    expect(operationFingerprint('send', { ...send, retry_unknown: true })).toBe(
      operationFingerprint('send', send),
    );
  });

  it('refuses the envelope on a reading action', () => {
    const poll: EdgeAgentRequest = {
      edge_id: '1',
      action: 'poll',
      session_id: SESSION,
      client_operation_id: OPERATION_ID,
      payload_fingerprint: fingerprint,
    };
    expect(validateEdgeAgentRequest(poll).ok).toBe(false);
  });
});

describe('edge RPC dispatch ids', () => {
  const rpc = (request: EdgeAgentRequest, extra: Partial<EdgeAgentRPCRequest> = {}): EdgeAgentRPCRequest => ({
    version: 1,
    actor_id: 'u',
    request,
    ...extra,
  });

  it('allows dispatch_id on the enveloped actions and requires it, with a session, for dispatch_status', () => {
    const send: EdgeAgentRequest = { edge_id: '1', action: 'send', session_id: SESSION, text: 'hi' };
    expect(validateRpcEnvelope(rpc(send, { dispatch_id: OPERATION_ID }))).toEqual({ ok: true });
    const status: EdgeAgentRequest = { edge_id: '1', action: 'dispatch_status', session_id: SESSION };
    expect(validateRpcEnvelope(rpc(status, { dispatch_id: OPERATION_ID }))).toEqual({ ok: true });
    expect(validateRpcEnvelope(rpc(status)).ok).toBe(false);
    expect(
      validateRpcEnvelope(rpc({ ...status, session_id: undefined }, { dispatch_id: OPERATION_ID })).ok,
    ).toBe(false);
    const interrupt: EdgeAgentRequest = { edge_id: '1', action: 'interrupt', session_id: SESSION };
    expect(validateRpcEnvelope(rpc(interrupt, { dispatch_id: OPERATION_ID }))).toEqual({ ok: true });
    const poll: EdgeAgentRequest = { edge_id: '1', action: 'poll', session_id: SESSION };
    expect(validateRpcEnvelope(rpc(poll, { dispatch_id: OPERATION_ID })).ok).toBe(false);
  });

  it('refuses dispatch_status over HTTP and a malformed dispatch id on the edge wire', () => {
    expect(
      edgeAgentRequestSchema.safeParse({ edge_id: '1', action: 'dispatch_status', session_id: SESSION })
        .success,
    ).toBe(false);
    const wire = {
      version: 1,
      actor_id: 'u',
      request: { edge_id: '1', action: 'send', session_id: SESSION },
    };
    expect(edgeAgentRpcRequestSchema.safeParse({ ...wire, dispatch_id: OPERATION_ID }).success).toBe(true);
    expect(edgeAgentRpcRequestSchema.safeParse({ ...wire, dispatch_id: 'not-an-id' }).success).toBe(false);
  });
});
