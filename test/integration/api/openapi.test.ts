// The OpenAPI document against the api that serves it: structurally valid 3.1, the same routes
// as Fastify serves, the action union and status enum equal to the contract's, and every action's
// example accepted by the contract's decoder and rules. Boots the api in-process (only NATS is
// needed: these routes never call another service).
import 'reflect-metadata';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { z } from 'zod';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  EDGE_AGENT_ACTIONS,
  EDGE_AGENT_STATUSES,
  Subjects,
  edgeAgentRequestSchema,
  edgeAgentResultSchema,
  validateEdgeAgentRequest,
  type EdgeAgentAction,
} from '#contracts';
import { testServices, uniqueNamespace, TEST_JWT_SECRET } from '#test-support';
import { createApiApp } from '../../../apps/api/src/app.js';
import type { ApiConfig } from '../../../apps/api/src/config.js';

type Json = { [key: string]: unknown };

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const PATH_ITEM_FIELDS = new Set([
  ...HTTP_METHODS,
  '$ref',
  'summary',
  'description',
  'servers',
  'parameters',
]);
const COMPONENT_NAME = /^[a-zA-Z0-9._-]+$/;
const STATUS_KEY = /^([1-5][0-9][0-9]|[1-5]XX|default)$/;

/** One valid value per request field, to add to an action that must refuse it. */
const FIELD_SAMPLES: Json = {
  installation_id: 'i'.repeat(32),
  project: '/home/alice/project',
  session_id: 's'.repeat(32),
  text: 'hello',
  skill_id: 'k'.repeat(32),
  access_id: 'a'.repeat(32),
  directory: '/home/alice',
  working_directory: 'src',
  cursor: '3',
  model: 'gpt-5-codex',
  title: 'A title',
  history_page: '2',
  approval_id: 'p'.repeat(32),
  decision: 'accept',
  permission_mode: 'read-only',
  input_id: 'n'.repeat(32),
  answers: [{ question_id: 'q1', answers: ['yes'] }],
  history_before: '7',
  file: { path: 'README.md' },
  attachments: ['notes.txt'],
};
const FILE_SAMPLES: Json = {
  path: 'README.md',
  name: 'notes.txt',
  transfer_id: 't'.repeat(32),
  offset: 5,
  size: 12,
  data: 'aGVsbG8=',
};

let app: NestFastifyApplication;
let nc: NatsConnection;
let baseUrl: string;
/** `METHOD /path/{param}` of every route Fastify registered, as the onRoute hook saw them. */
const served = new Set<string>();
let doc: Json;

function at(value: unknown, ...keys: string[]): unknown {
  let current = value;
  for (const key of keys) current = (current as Json | undefined)?.[key];
  return current;
}

function lookup(pointer: string): unknown {
  expect(pointer.startsWith('#/')).toBe(true);
  return at(doc, ...pointer.slice(2).split('/'));
}

function resolve(value: unknown): Json {
  let current = value as Json;
  for (let hops = 0; typeof current['$ref'] === 'string' && hops < 10; hops++) {
    current = lookup(current['$ref']) as Json;
  }
  return current;
}

function walk(value: unknown, visit: (node: Json) => void): void {
  if (Array.isArray(value)) value.forEach((item) => walk(item, visit));
  else if (typeof value === 'object' && value !== null) {
    visit(value as Json);
    Object.values(value).forEach((item) => walk(item, visit));
  }
}

const schemas = (): Json => at(doc, 'components', 'schemas') as Json;
const member = (action: EdgeAgentAction): Json => schemas()[`EdgeAgentRequest_${action}`] as Json;

/** The contract's verdict on a request body, as the api applies it (decode, then the rules). */
function contractAccepts(body: unknown): boolean {
  const decoded = edgeAgentRequestSchema.safeParse(body);
  return decoded.success && validateEdgeAgentRequest(decoded.data).ok;
}

/** Ajv over the document's schemas, their refs rewritten to a $defs bundle. */
function schemaValidator(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allowUnionTypes: true, allErrors: true });
  ajv.addVocabulary(['discriminator', 'x-max-bytes']);
  const bundle = JSON.parse(
    JSON.stringify(schemas()).replaceAll('"#/components/schemas/', '"urn:tether:openapi#/$defs/'),
  ) as Json;
  ajv.addSchema({ $id: 'urn:tether:openapi', $defs: bundle });
  return ajv;
}

let compiledUnion: ValidateFunction | undefined;
/** The union compiled once: compiling it takes a while on a busy machine. */
function unionValidator(): ValidateFunction {
  compiledUnion ??= schemaValidator().compile({ $ref: 'urn:tether:openapi#/$defs/EdgeAgentRequest' });
  return compiledUnion;
}

beforeAll(async () => {
  const { natsUrl } = await testServices();
  const namespace = uniqueNamespace('openapi');
  nc = await connect({ servers: natsUrl, name: 'api-openapi' });
  const config: ApiConfig = {
    nats: { servers: [natsUrl] },
    namespace,
    logLevel: 'error',
    http: { host: '127.0.0.1', port: 0 },
    jwt: { key: { kind: 'secret', secret: TEST_JWT_SECRET } },
  };
  app = await createApiApp({ config, nc, subjects: new Subjects(namespace) });
  // Routes are registered when the app initialises, so the hook sees every one of them.
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      for (const method of methods) served.add(`${method.toUpperCase()} ${path}`);
    });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address();
  if (typeof address !== 'object' || address === null) throw new Error('Api did not bind a TCP port.');
  baseUrl = `http://127.0.0.1:${address.port}`;
  const response = await fetch(`${baseUrl}/api/v1/openapi.json`);
  doc = (await response.json()) as Json;
});

afterAll(async () => {
  await app?.close();
  await nc?.drain();
});

describe('GET /api/v1/openapi.json', () => {
  it('serves the document without authentication, outside the envelope, no-store', async () => {
    const response = await fetch(`${baseUrl}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Json;
    expect(body['openapi']).toMatch(/^3\.1\.\d+$/);
    expect(body).not.toHaveProperty('data');
  });

  it('answers another method with 405 and Allow', async () => {
    const response = await fetch(`${baseUrl}/api/v1/openapi.json`, { method: 'POST' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
    expect(response.headers.get('cache-control')).toBe('no-store');
  });
});

describe('the document', () => {
  it('is structurally a valid OpenAPI 3.1 document', () => {
    expect(doc['openapi']).toMatch(/^3\.1\.\d+$/);
    expect(typeof at(doc, 'info', 'title')).toBe('string');
    expect(typeof at(doc, 'info', 'version')).toBe('string');
    const securitySchemes = at(doc, 'components', 'securitySchemes') as Json;
    expect(securitySchemes['bearerAuth']).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
    const declaredTags = new Set((doc['tags'] as { name: string }[]).map((tag) => tag.name));

    for (const [kind, entries] of Object.entries(doc['components'] as Record<string, Json>)) {
      expect(kind).toMatch(
        /^(schemas|responses|parameters|examples|requestBodies|headers|securitySchemes|links|callbacks|pathItems)$/,
      );
      for (const name of Object.keys(entries)) expect(name).toMatch(COMPONENT_NAME);
    }
    const operationIds = new Set<string>();
    for (const [path, item] of Object.entries(doc['paths'] as Record<string, Json>)) {
      expect(path).toMatch(/^\//);
      for (const key of Object.keys(item)) expect(PATH_ITEM_FIELDS).toContain(key);
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      for (const method of HTTP_METHODS.filter((m) => item[m] !== undefined)) {
        const operation = item[method] as Json;
        const where = `${method.toUpperCase()} ${path}`;
        expect(typeof operation['operationId']).toBe('string');
        expect(operationIds.has(operation['operationId'] as string)).toBe(false);
        operationIds.add(operation['operationId'] as string);
        for (const tag of (operation['tags'] as string[] | undefined) ?? [])
          expect(declaredTags).toContain(tag);
        for (const requirement of (operation['security'] ?? doc['security']) as Json[]) {
          for (const scheme of Object.keys(requirement)) expect(securitySchemes).toHaveProperty(scheme);
        }
        // Every path template parameter is declared, in the path, required.
        const parameters = [
          ...((item['parameters'] as Json[]) ?? []),
          ...((operation['parameters'] as Json[]) ?? []),
        ]
          .map(resolve)
          .map((p) => {
            expect(['query', 'header', 'path', 'cookie']).toContain(p['in']);
            expect(p['schema'] ?? p['content']).toBeDefined();
            return p;
          });
        for (const name of templated) {
          expect(parameters.find((p) => p['in'] === 'path' && p['name'] === name)).toMatchObject({
            required: true,
          });
        }
        const responses = operation['responses'] as Json;
        expect(Object.keys(responses).length).toBeGreaterThan(0);
        for (const [status, response] of Object.entries(responses)) {
          expect(`${where} ${status}`).toMatch(new RegExp(`${STATUS_KEY.source.slice(1, -1)}$`));
          const resolved = resolve(response);
          expect(typeof resolved['description']).toBe('string');
          // Every response says no-store, as every response is, but the console's page and assets.
          const cached = status === '200' && (path === '/' || path === '/assets/{name}');
          expect(resolve(at(resolved, 'headers', 'Cache-Control'))).toMatchObject({
            schema: { const: cached ? expect.not.stringMatching(/^no-store$/) : 'no-store' },
          });
        }
      }
    }
    // Every reference points at something.
    walk(doc, (node) => {
      if (typeof node['$ref'] === 'string') expect(lookup(node['$ref'])).toBeDefined();
    });
  });

  it('holds component schemas that compile as JSON Schema 2020-12', () => {
    const ajv = schemaValidator();
    for (const name of Object.keys(schemas())) {
      expect(() => ajv.compile({ $ref: `urn:tether:openapi#/$defs/${name}` })).not.toThrow();
    }
  });

  it('documents exactly the routes the api serves', () => {
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc['paths'] as Record<string, Json>)) {
      for (const method of HTTP_METHODS.filter((m) => item[m] !== undefined)) {
        documented.add(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(served.size).toBeGreaterThan(0);
    expect(served).toContain('GET /api/v1/docs');
    expect([...documented].sort()).toEqual([...served].sort());
  });

  it('documents the envelope, bearer security and every error of each operation', () => {
    const post = at(doc, 'paths', '/api/v1/edge-agents', 'post') as Json;
    expect(post['security']).toBeUndefined();
    expect(doc['security']).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(post['responses'] as Json).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '405',
      '500',
      '503',
    ]);
    const ok = at(post, 'responses', '200', 'content', 'application/json', 'schema') as Json;
    expect(ok).toMatchObject({
      required: ['code', 'message', 'data'],
      properties: {
        code: { const: 200 },
        message: { const: 'success' },
        data: { $ref: '#/components/schemas/EdgeAgentResult' },
      },
    });
    expect(at(resolve(at(post, 'responses', '405')), 'headers', 'Allow')).toBeDefined();
    expect(at(doc, 'paths', '/api/v1/openapi.json', 'get', 'security')).toEqual([]);
    expect(at(doc, 'paths', '/api/v1/docs', 'get', 'security')).toEqual([]);
  });

  it('has one union member per action, keyed by action', () => {
    const union = schemas()['EdgeAgentRequest'] as Json;
    const discriminator = union['discriminator'] as { propertyName: string; mapping: Record<string, string> };
    expect(discriminator.propertyName).toBe('action');
    const refs = (union['oneOf'] as Json[]).map((entry) => entry['$ref'] as string);
    const actions = refs.map((ref) => at(resolve({ $ref: ref }), 'properties', 'action', 'const'));
    expect(actions).toEqual([...EDGE_AGENT_ACTIONS]);
    expect(new Set(actions).size).toBe(EDGE_AGENT_ACTIONS.length);
    expect(Object.keys(discriminator.mapping)).toEqual([...EDGE_AGENT_ACTIONS]);
    EDGE_AGENT_ACTIONS.forEach((action, i) => expect(discriminator.mapping[action]).toBe(refs[i]));
    // The union, as a schema, refuses what the contract refuses.
    expect(unionValidator()({ edge_id: '1001', action: 'snapshot', session_id: 's'.repeat(32) })).toBe(false);
    expect(unionValidator()({ edge_id: '1001', action: 'discover', text: 'hi' })).toBe(false);
    expect(unionValidator()({ edge_id: '0', action: 'discover' })).toBe(false);
    for (const action of EDGE_AGENT_ACTIONS) {
      expect(member(action)).toMatchObject({ additionalProperties: false, type: 'object' });
      expect(member(action)['required']).toEqual(expect.arrayContaining(['edge_id', 'action']));
    }
  });

  it('lists exactly the contract request fields across the union and the result fields in EdgeAgentResult', () => {
    const requestFields = Object.keys(
      (z.toJSONSchema(edgeAgentRequestSchema, { io: 'input' }) as { properties: Json }).properties,
    );
    const documented = new Set(
      EDGE_AGENT_ACTIONS.flatMap((action) => Object.keys(member(action)['properties'] as Json)),
    );
    expect([...documented].sort()).toEqual([...requestFields].sort());
    const resultFields = Object.keys(
      (z.toJSONSchema(edgeAgentResultSchema, { io: 'input' }) as { properties: Json }).properties,
    );
    expect(Object.keys(at(schemas(), 'EdgeAgentResult', 'properties') as Json).sort()).toEqual(
      resultFields.sort(),
    );
  });

  it('gives the statuses of the contract, resume_unavailable included', () => {
    expect(at(schemas(), 'EdgeAgentStatus', 'enum')).toEqual([...EDGE_AGENT_STATUSES]);
    expect(at(schemas(), 'EdgeAgentStatus', 'enum')).toContain('resume_unavailable');
    expect(at(schemas(), 'EdgeAgentResult', 'properties', 'status')).toEqual({
      $ref: '#/components/schemas/EdgeAgentStatus',
    });
  });

  it.each(EDGE_AGENT_ACTIONS)('has a %s example the contract and the union both accept', (action) => {
    const example = (member(action)['examples'] as unknown[])[0];
    expect(contractAccepts(example)).toBe(true);
    const bodyExample = at(
      doc,
      'paths',
      '/api/v1/edge-agents',
      'post',
      'requestBody',
      'content',
      'application/json',
      'examples',
      action,
      'value',
    );
    expect(bodyExample).toEqual(example);
    expect(unionValidator()(example)).toBe(true);
  });

  it.each(EDGE_AGENT_ACTIONS)(
    'lists the fields %s requires and refuses, as the contract rules do',
    (action) => {
      const schema = member(action);
      const example = (schema['examples'] as Json[])[0] as Json;
      const properties = schema['properties'] as Json;
      for (const field of (schema['required'] as string[]).filter((f) => f !== 'edge_id' && f !== 'action')) {
        const without = { ...example };
        delete without[field];
        expect({ field, accepted: contractAccepts(without) }).toEqual({ field, accepted: false });
      }
      for (const field of Object.keys(FIELD_SAMPLES).filter((f) => !(f in properties))) {
        const withField = { ...example, [field]: FIELD_SAMPLES[field] };
        expect({ field, accepted: contractAccepts(withField) }).toEqual({ field, accepted: false });
      }
      // The `file` operation of the file actions: same check one level down.
      const file = properties['file'] as Json | undefined;
      if (file === undefined || file['properties'] === undefined) return;
      const fileExample = example['file'] as Json;
      for (const field of Object.keys(FILE_SAMPLES).filter((f) => !(f in (file['properties'] as Json)))) {
        const withField = { ...example, file: { ...fileExample, [field]: FILE_SAMPLES[field] } };
        expect({ field, accepted: contractAccepts(withField) }).toEqual({ field, accepted: false });
      }
      for (const field of (file['required'] as string[] | undefined) ?? []) {
        const fileWithout = { ...fileExample };
        delete fileWithout[field];
        expect({ field, accepted: contractAccepts({ ...example, file: fileWithout }) }).toEqual({
          field,
          accepted: false,
        });
      }
    },
  );

  it('takes bounds from the contract limits', () => {
    const answer = member('answer')['properties'] as Json;
    expect(answer['answers']).toMatchObject({ minItems: 1, maxItems: 3 });
    expect(at(member('rename'), 'properties', 'title')).toMatchObject({ maxLength: 120 });
    expect(at(member('send'), 'properties', 'attachments')).toMatchObject({ maxItems: 8, uniqueItems: true });
    expect(at(member('send'), 'properties', 'text')).toMatchObject({ 'x-max-bytes': 16 * 1024 });
    expect(at(member('file_begin'), 'properties', 'file', 'properties', 'size')).toMatchObject({
      minimum: 0,
      maximum: 20 * 1024 * 1024,
    });
  });
});

describe('GET /api/v1/docs', () => {
  it('answers a self-contained HTML page, no-store', async () => {
    const response = await fetch(`${baseUrl}/api/v1/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    const html = await response.text();
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('id="openapi-document"');
    // Nothing is loaded from anywhere: no external script, style, image or font.
    expect(html).not.toMatch(/<(script|link|img|iframe)[^>]*\s(src|href)=/i);
    expect(html).not.toMatch(/https?:\/\//);
    const embedded = /<script type="application\/json" id="openapi-document">([^<]*)<\/script>/.exec(html);
    expect(JSON.parse(embedded![1]!)).toEqual(doc);
  });
});
