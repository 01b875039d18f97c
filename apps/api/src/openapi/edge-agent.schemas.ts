// JSON Schemas (2020-12, as OpenAPI 3.1 uses) of the edge_agent contract, generated from the
// contract's constants (actions, statuses, modes, limits) so a bound changes in one place. The
// rules themselves are code in libs/contracts/src/validation.ts; ACTION_SHAPES restates which
// fields each action takes, and the openapi integration test checks every example against the
// contract's decoder and rules so the two cannot drift apart unnoticed. One module per concern
// under edge-agent/ (fields, action shapes, examples, requests, results); this is their face.
export { ref, type Schema } from './edge-agent/json-schema.js';
export { ACTION_SHAPES } from './edge-agent/action-shapes.js';
export { ACTION_EXAMPLES, actionExample } from './edge-agent/examples.js';
export { actionSchemaName, requestSchemas } from './edge-agent/requests.js';
export { resultSchemas } from './edge-agent/results.js';
