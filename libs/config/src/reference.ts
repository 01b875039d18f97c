import { z } from 'zod';

// The configuration reference (docs/configuration.md) is generated from the schemas the services
// validate their environment with: names and defaults come from the schemas themselves, meanings
// from a table beside each schema. A test fails when a variable has no meaning or a meaning names
// a variable no schema reads.

/** What one variable means; `default` only where the schema computes it (a path under $HOME). */
export interface VariableDoc {
  meaning: string;
  default?: string;
}
export type VariableDocs = Readonly<Record<string, VariableDoc>>;

export interface EnvVariable {
  name: string;
  /** The value an unset variable takes, as text; undefined when unset means "not configured". */
  default: string | undefined;
  required: boolean;
}

/** The object schema inside refinements, transforms and pipes. */
function objectOf(schema: z.ZodType): z.ZodObject {
  let current: z.ZodType = schema;
  for (let depth = 0; depth < 10; depth += 1) {
    if (current instanceof z.ZodObject) return current;
    if (current instanceof z.ZodPipe) {
      current = current.in instanceof z.ZodTransform ? (current.out as z.ZodType) : (current.in as z.ZodType);
      continue;
    }
    break;
  }
  throw new Error('The configuration schema holds no object of variables.');
}

function shown(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Every variable an environment schema reads, with the default an unset one takes. */
export function envVariables(schema: z.ZodType): EnvVariable[] {
  return Object.entries(objectOf(schema).shape).map(([name, field]) => {
    const unset = (field as z.ZodType).safeParse(undefined);
    if (!unset.success) return { name, default: undefined, required: true };
    return { name, default: unset.data === undefined ? undefined : shown(unset.data), required: false };
  });
}
