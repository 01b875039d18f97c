// `EdgeAgentRequest`: the oneOf over actions, each member built from its shape and field schemas.
import { EDGE_AGENT_ACTIONS, Limits, type EdgeAgentAction } from '#contracts';
import { ref, type Schema } from './json-schema.js';
import { ACTION_SHAPES } from './action-shapes.js';
import { actionExample } from './examples.js';
import { FIELD_SCHEMAS, FILE_SHAPES } from './request-fields.js';

export const actionSchemaName = (action: EdgeAgentAction): string => `EdgeAgentRequest_${action}`;

const EDGE_ID: Schema = {
  description: `Connector id (uint64): a decimal string of at most ${Limits.EDGE_ID_MAX_DIGITS} significant digits or a safe integer; never 0.`,
  anyOf: [
    { type: 'string', pattern: `^0*[1-9][0-9]{0,${Limits.EDGE_ID_MAX_DIGITS - 1}}$` },
    { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
  ],
};

function actionSchema(action: EdgeAgentAction): Schema {
  const shape = ACTION_SHAPES[action];
  const properties: Schema = { edge_id: EDGE_ID, action: { type: 'string', const: action } };
  for (const field of [...shape.required, ...shape.optional]) {
    properties[field] =
      field === 'file' ? (FILE_SHAPES as Record<string, Schema>)[action] : FIELD_SCHEMAS[field];
  }
  return {
    type: 'object',
    title: action,
    description: shape.summary,
    additionalProperties: false,
    required: ['edge_id', 'action', ...shape.required],
    properties,
    ...shape.extra,
    examples: [actionExample(action)],
  };
}

/** `EdgeAgentRequest` (the union) and one member per action. */
export function requestSchemas(): Record<string, Schema> {
  const schemas: Record<string, Schema> = {};
  const mapping: Record<string, string> = {};
  for (const action of EDGE_AGENT_ACTIONS) {
    schemas[actionSchemaName(action)] = actionSchema(action);
    mapping[action] = `#/components/schemas/${actionSchemaName(action)}`;
  }
  return {
    EdgeAgentRequest: {
      description:
        'Body of POST /api/v1/edge-agents: one member per action, keyed by `action`. Unknown fields are refused at every level; ' +
        'as in proto3 JSON an empty string or list counts as absent, and fields another action takes must be absent. ' +
        'The actor is always taken from the token, never from the body.',
      oneOf: EDGE_AGENT_ACTIONS.map((action) => ref(actionSchemaName(action))),
      discriminator: { propertyName: 'action', mapping },
    },
    ...schemas,
  };
}
