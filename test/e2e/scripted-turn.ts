// One scripted turn through the api (discover, create an access, start, send, poll until the
// turn finished), for the e2e suites that need traffic on every hop.
import { eventually, sessionBase, startSession, type ApiClient, type Snapshot } from '#test-support';
import type { Stack } from '../../scripts/stack/launcher.js';

export async function scriptedTurn(
  client: ApiClient,
  stack: Stack,
  projectDir: string,
  text: string,
): Promise<{ sent: Snapshot; finished: Snapshot }> {
  const base = sessionBase(await startSession(client, stack.edge!.id, projectDir, { name: 'e2e' }));
  const sent = await client.agent<Snapshot>({ ...base, action: 'send', text });
  if (sent.status !== 'ok') throw new Error(`send answered ${sent.status}`);
  const finished = await eventually(async () => {
    const polled = await client.agent<Snapshot>({ ...base, action: 'poll' });
    return polled.status === 'ok' && !polled.running && polled.turn_timing?.finished_ms != null
      ? polled
      : undefined;
  }, 'the turn finishing');
  return { sent, finished };
}
