// The scripted agent's script: rules matched against the prompt, each with steps to play.
// Deterministic by construction, so tests and demos see the same session every time.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';

const ms = z.number().int().min(0).max(600_000);

const replyStep = z
  .object({
    type: z.literal('reply'),
    /**
     * `{prompt_length}` becomes the prompt length in characters, `{answer}` the last input answer,
     * `{image_count}` the number of images the turn received.
     */
    text: z.string(),
    deltas: z.number().int().min(1).max(10_000).default(3),
    delay_ms: ms.default(5),
  })
  .strict();
const commandStep = z
  .object({
    type: z.literal('command'),
    command: z.string().min(1),
    output: z.string().default(''),
    exit_code: z.number().int().default(0),
    approval: z.boolean().default(false),
    reason: z.string().optional(),
    /** The output streams in this many deltas before the aggregated output replaces it. */
    output_deltas: z.number().int().min(0).max(10_000).default(1),
  })
  .strict();
const fileChangeStep = z
  .object({
    type: z.literal('file_change'),
    path: z.string().min(1),
    kind: z.enum(['add', 'delete', 'update']).default('update'),
    diff: z.string(),
    approval: z.boolean().default(false),
    reason: z.string().optional(),
  })
  .strict();
const inputStep = z
  .object({
    type: z.literal('input'),
    questions: z
      .array(
        z
          .object({
            id: z.string().min(1),
            question: z.string().min(1),
            header: z.string().optional(),
            is_other: z.boolean().optional(),
            is_secret: z.boolean().optional(),
            options: z
              .array(z.object({ label: z.string().min(1), description: z.string().optional() }).strict())
              .optional(),
          })
          .strict(),
      )
      .min(1),
  })
  .strict();
const delayStep = z.object({ type: z.literal('delay'), ms }).strict();
const failStep = z.object({ type: z.literal('fail') }).strict();
const crashStep = z.object({ type: z.literal('crash') }).strict();
const titleStep = z.object({ type: z.literal('title'), title: z.string() }).strict();

const step = z.discriminatedUnion('type', [
  replyStep,
  commandStep,
  fileChangeStep,
  inputStep,
  delayStep,
  failStep,
  crashStep,
  titleStep,
]);
export type ScriptStep = z.infer<typeof step>;

const match = z.union([
  z.object({ exact: z.string() }).strict(),
  z.object({ prefix: z.string() }).strict(),
  z.object({ regex: z.string() }).strict(),
]);

const rule = z
  .object({
    /** Missing: matches every prompt. */
    match: match.optional(),
    steps: z.array(step),
  })
  .strict();
export type ScriptRule = z.infer<typeof rule>;

export const scriptSchema = z
  .object({
    rules: z.array(rule).min(1),
    models: z.array(z.object({ id: z.string().min(1), name: z.string().optional() }).strict()).default([
      { id: 'scripted-standard', name: 'Scripted standard' },
      { id: 'scripted-fast', name: 'Scripted fast' },
    ]),
    skills: z
      .array(z.object({ name: z.string().min(1), description: z.string().optional() }).strict())
      .default([]),
    dispatch_delay_ms: ms.default(0),
    agent_version: z.string().default('scripted-1'),
    /** The native thread name the session opens with (none by default). */
    title: z.string().optional(),
  })
  .strict();
export type Script = z.infer<typeof scriptSchema>;

/** Any prompt: a short streamed reply that names the prompt length, never the prompt. */
export const DEFAULT_SCRIPT: Script = scriptSchema.parse({
  rules: [
    {
      match: { exact: 'approve me' },
      steps: [
        { type: 'reply', text: 'I need to run a command first.' },
        {
          type: 'command',
          command: 'echo scripted',
          output: 'scripted\n',
          approval: true,
          reason: 'Scripted check',
        },
        { type: 'reply', text: 'Done.' },
      ],
    },
    {
      match: { exact: 'ask me' },
      steps: [
        {
          type: 'input',
          questions: [
            {
              id: 'choice',
              header: 'Choice',
              question: 'Which option do you pick?',
              options: [{ label: 'yes' }, { label: 'no' }],
            },
          ],
        },
        { type: 'reply', text: 'You answered {answer}.' },
      ],
    },
    { steps: [{ type: 'reply', text: 'Scripted reply to a prompt of {prompt_length} characters.' }] },
  ],
  skills: [{ name: 'scripted-review', description: 'A scripted skill.' }],
});

export class ScriptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScriptError';
  }
}

export function parseScript(raw: unknown, source: string): Script {
  const parsed = scriptSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ScriptError(
      `Scripted agent script ${source} is invalid at ${issue?.path.join('.') ?? '?'}: ${issue?.message}`,
    );
  }
  for (const entry of parsed.data.rules) {
    if (entry.match && 'regex' in entry.match) {
      try {
        new RegExp(entry.match.regex);
      } catch {
        throw new ScriptError(`Scripted agent script ${source} has an invalid regex.`);
      }
    }
  }
  return parsed.data;
}

export async function loadScript(path: string | undefined): Promise<Script> {
  if (!path) return DEFAULT_SCRIPT;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new ScriptError(`Scripted agent script ${path} cannot be read (TETHER_SCRIPTED_SCRIPT).`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ScriptError(`Scripted agent script ${path} is not JSON (TETHER_SCRIPTED_SCRIPT).`);
  }
  return parseScript(raw, path);
}

/** The first rule whose matcher accepts the prompt (trimmed for exact matches). */
export function matchRule(script: Script, prompt: string): ScriptRule | undefined {
  return script.rules.find((candidate) => {
    const matcher = candidate.match;
    if (!matcher) return true;
    if ('exact' in matcher) return prompt.trim() === matcher.exact;
    if ('prefix' in matcher) return prompt.startsWith(matcher.prefix);
    return new RegExp(matcher.regex).test(prompt);
  });
}
