// The action table against every place that still handles actions one by one: the contract's
// field rules (validation.ts), the api's OpenAPI document, the router's paths and the edge's
// action handlers. Each must
// handle exactly the table's actions, with the table's facts. This spec reaches into the apps on
// purpose: it is the one check that spans them (the apps never import each other).
import { buildOpenApiDocument } from '../../../apps/api/src/openapi/openapi.document.js';
import { ACTION_EXAMPLES } from '../../../apps/api/src/openapi/edge-agent.schemas.js';
import { RouterPath } from '../../../apps/session-router/src/edge-agent/router-path.service.js';
import type { AgentDriver } from '../../../apps/edge-connector/src/agent/agent-driver.js';
import { SessionsService } from '../../../apps/edge-connector/src/sessions/sessions.service.js';
import {
  ACTION_NAMES,
  ACTIONS,
  AUDITED_ACTIONS,
  EDGE_AGENT_ACTIONS,
  EDGE_AGENT_INTERNAL_ACTIONS,
  FILE_ACTIONS,
  OPERATION_ACTIONS,
  actionSpec,
  type ActionName,
  type ActionSpec,
  type EdgeAgentInternalAction,
  type EdgeAgentRequest,
} from './index.js';
import { validateEdgeAgentRequest, validateRpcEnvelope } from './validation.js';

type Json = Record<string, unknown>;
type Fields = Omit<EdgeAgentRequest, 'edge_id' | 'action'>;

const SESSION = 's'.repeat(32);
const ENVELOPE: Fields = {
  client_operation_id: `1700000000000-${'a'.repeat(32)}`,
  payload_fingerprint: 'f'.repeat(64),
};
/** One valid request of each internal action (the public ones are the OpenAPI examples). */
const INTERNAL_EXAMPLES: { [A in EdgeAgentInternalAction]: Fields } = {
  snapshot: { session_id: SESSION },
  expire: { session_id: SESSION },
  dispatch_status: { session_id: SESSION },
};
const example = (action: ActionName): Fields =>
  action in INTERNAL_EXAMPLES
    ? INTERNAL_EXAMPLES[action as EdgeAgentInternalAction]
    : ACTION_EXAMPLES[action as Exclude<ActionName, EdgeAgentInternalAction>];

/** The edge's full check of one request, as the router would send it (validateRpcEnvelope). */
function accepted(action: ActionName, fields: Fields): boolean {
  return validateRpcEnvelope({
    version: 1,
    actor_id: 'alice',
    request: { edge_id: '1001', action, ...fields },
    ...(action === 'resume' ? { resume: { session_id: SESSION, revision: 1 } } : {}),
    ...(action === 'dispatch_status' ? { dispatch_id: 'd1' } : {}),
  }).ok;
}

const without = (fields: Fields, field: keyof Fields): Fields => {
  const copy = { ...fields };
  delete copy[field];
  return copy;
};
const where = (test: (spec: ActionSpec) => boolean): ActionName[] =>
  ACTION_NAMES.filter((action) => test(ACTIONS[action]));

describe('the action table', () => {
  it('derives every action list in table order', () => {
    expect(EDGE_AGENT_ACTIONS).toEqual(where((spec) => spec.visibility === 'public'));
    expect(EDGE_AGENT_INTERNAL_ACTIONS).toEqual(where((spec) => spec.visibility === 'internal'));
    expect(FILE_ACTIONS).toEqual(where((spec) => spec.file));
    expect(OPERATION_ACTIONS).toEqual(where((spec) => spec.operation !== null));
    expect(AUDITED_ACTIONS).toEqual(where((spec) => spec.audited));
    expect(actionSpec('bogus')).toBeUndefined();
    expect(actionSpec('toString')).toBeUndefined();
  });

  it.each(ACTION_NAMES)('keeps the facts of %s consistent', (action) => {
    const spec: ActionSpec = ACTIONS[action];
    // A file action names a session and needs a permission of its own; only file actions do.
    expect(spec.permission !== null).toBe(spec.file);
    if (spec.file) expect(spec).toMatchObject({ session: true, reauthorize: true });
    // The envelope belongs to a client's mutation of one session, and is audited.
    if (spec.operation !== null)
      expect(spec).toMatchObject({ visibility: 'public', session: true, audited: true });
    // Tether's own actions are never a client's: nothing to permit, audit, re-authorize or route.
    if (spec.visibility === 'internal') {
      expect(spec).toMatchObject({ permission: null, audited: false, reauthorize: false, router: null });
    }
  });
});

describe('validation handles exactly the table', () => {
  it('refuses an action the table lacks', () => {
    const verdict = validateEdgeAgentRequest({ edge_id: '1001', action: 'bogus' as ActionName });
    expect(verdict).toEqual({ ok: false, reason: 'unknown action' });
  });

  it.each(ACTION_NAMES)('accepts %s as the table describes it', (action) => {
    const spec: ActionSpec = ACTIONS[action];
    const fields = example(action);
    expect(accepted(action, fields)).toBe(true);
    // session: it needs a session_id; otherwise it refuses one.
    const sessionless = spec.session ? without(fields, 'session_id') : { ...fields, session_id: SESSION };
    expect({ session: spec.session, accepted: accepted(action, sessionless) }).toEqual({
      session: spec.session,
      accepted: false,
    });
    // file: it needs `file`; otherwise it refuses one.
    const fileless = spec.file ? without(fields, 'file') : { ...fields, file: { path: 'README.md' } };
    expect({ file: spec.file, accepted: accepted(action, fileless) }).toEqual({
      file: spec.file,
      accepted: false,
    });
    // operation: it takes the mutation envelope; otherwise it refuses it.
    const operation = spec.operation !== null;
    expect({ operation, accepted: accepted(action, { ...fields, ...ENVELOPE }) }).toEqual({
      operation,
      accepted: operation,
    });
  });
});

describe('the OpenAPI document handles exactly the public actions', () => {
  const publicActions = where((spec) => spec.visibility === 'public');
  // Built in a hook, so a table row the document cannot describe fails these tests, not the file.
  let document: Json = {};
  let schemas: Record<string, Json> = {};
  let union: Json = {};
  beforeAll(() => {
    document = buildOpenApiDocument() as unknown as Json;
    schemas = (document['components'] as Json)['schemas'] as Record<string, Json>;
    union = schemas['EdgeAgentRequest'] as Json;
  });

  it('lists them in the union, its mapping, its members and the body examples', () => {
    const members = (union['oneOf'] as Json[]).map((member) => member['$ref']);
    expect(members).toEqual(publicActions.map((action) => `#/components/schemas/EdgeAgentRequest_${action}`));
    const mapping = (union['discriminator'] as { mapping: Json }).mapping;
    expect(Object.keys(mapping)).toEqual(publicActions);
    const memberNames = Object.keys(schemas).filter((name) => name.startsWith('EdgeAgentRequest_'));
    expect(memberNames).toEqual(publicActions.map((action) => `EdgeAgentRequest_${action}`));
    const post = ((document['paths'] as Json)['/api/v1/edge-agents'] as Json)['post'] as Json;
    const body = (post['requestBody'] as Json)['content'] as Record<string, Json>;
    expect(Object.keys(body['application/json']?.['examples'] as Json)).toEqual(publicActions);
  });

  it.each(publicActions)('describes %s with the table facts', (action) => {
    const spec: ActionSpec = ACTIONS[action];
    const member = schemas[`EdgeAgentRequest_${action}`] as Json;
    const properties = member['properties'] as Json;
    expect({
      session: (member['required'] as string[]).includes('session_id'),
      file: 'file' in properties,
      operation: 'client_operation_id' in properties,
    }).toEqual({ session: spec.session, file: spec.file, operation: spec.operation !== null });
  });
});

describe("the router's paths", () => {
  it('serve exactly the path kinds the table names', () => {
    // The handlers only close over the router's services: none is called here.
    const router = new RouterPath(...([] as unknown as ConstructorParameters<typeof RouterPath>));
    const paths = router['paths'];
    const kinds = new Set(where((spec) => spec.router !== null).map((action) => ACTIONS[action].router));
    expect(new Set(Object.keys(paths))).toEqual(kinds);
    for (const handler of Object.values(paths)) expect(typeof handler).toBe('function');
  });
});

describe("the edge connector's action handlers", () => {
  // No handler runs here but the refusals: the driver is never asked.
  const sessions = new SessionsService(
    {} as AgentDriver,
    { homeDir: '/nonexistent', unsupportedUser: false },
    {
      changed: () => undefined,
    },
  );
  const handled = [...sessions['handlers'].keys()];

  it('register only actions of the table', () => {
    expect(handled.filter((action) => actionSpec(action) === undefined)).toEqual([]);
  });

  it.each(ACTION_NAMES.filter((action) => !ACTIONS[action].file && !handled.includes(action)))(
    'answer %s, which no handler registers, as not served yet',
    async (action) => {
      const rpc = { version: 1, actor_id: 'alice', request: { edge_id: '1001', action, ...example(action) } };
      await expect(sessions.handle(rpc, new AbortController().signal)).resolves.toEqual(
        expect.objectContaining({ status: 'upgrade_required' }),
      );
    },
  );
});
