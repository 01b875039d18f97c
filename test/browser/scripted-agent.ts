// The scripted agent's script for the console tests: one rule per thing a person does with the
// console (approve a command, decline a file change, answer a question, watch a slow reply).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SLOW_END = 'THE END.';
/** Streamed in 24 pieces over about 6 s: long enough to reload or cut the stream mid-turn. */
export const SLOW_TEXT = `${'slowly streamed words '.repeat(12)}${SLOW_END}`;

/** Writes the script into the edge's data folder; returns the edge's environment for it. */
export function writeScript(edgeDir: string, projectDir: string): Record<string, string> {
  const path = join(edgeDir, 'script.json');
  writeFileSync(
    path,
    JSON.stringify({
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
              reason: 'A check',
            },
            { type: 'reply', text: 'Command step over.' },
          ],
        },
        {
          match: { exact: 'patch me' },
          steps: [
            {
              type: 'file_change',
              path: join(projectDir, 'notes.txt'),
              kind: 'add',
              diff: '+written by the agent\n',
              approval: true,
              reason: 'Add notes',
            },
            { type: 'reply', text: 'Patch step over.' },
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
                  question: 'Which option?',
                  options: [{ label: 'yes' }, { label: 'no' }],
                },
              ],
            },
            { type: 'reply', text: 'You answered {answer}.' },
          ],
        },
        {
          match: { prefix: 'slow' },
          steps: [
            {
              type: 'reply',
              text: SLOW_TEXT,
              deltas: 24,
              delay_ms: 250,
            },
          ],
        },
        {
          steps: [
            {
              type: 'reply',
              text: 'Scripted reply to a prompt of {prompt_length} characters.',
              deltas: 6,
              delay_ms: 120,
            },
          ],
        },
      ],
    }),
  );
  return { TETHER_SCRIPTED_SCRIPT: path };
}
