// One scripted turn through the api (discover, create an access, start, send, poll until the
// turn finished), for the e2e suites that need traffic on every hop.
import type { ApiClient } from '#test-support';
import type { Stack } from '../../scripts/stack/launcher.js';

export interface TurnSnapshot {
  status: string;
  session_id?: string;
  revision?: number;
  running?: boolean;
  installations?: { id: string; kind: string }[];
  turn_timing?: { dispatch_ms?: number | null; first_reply_ms?: number | null; finished_ms?: number | null };
  request_service_ms?: number;
}

/** Polls `probe` until it returns a value; fails after 30 s with `what`. */
export async function eventually<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((done) => setTimeout(done, 200));
  }
  throw new Error(`${what} did not happen within ${timeoutMs / 1000} s`);
}

export async function scriptedTurn(
  client: ApiClient,
  stack: Stack,
  projectDir: string,
  text: string,
): Promise<{ sent: TurnSnapshot; finished: TurnSnapshot }> {
  const edgeId = stack.edge!.id;
  const discovered = await client.agent<TurnSnapshot>({ edge_id: edgeId, action: 'discover' });
  const installation = discovered.installations?.find((candidate) => candidate.kind === 'scripted');
  if (!installation) throw new Error('the edge offers no scripted agent');
  const created = await client.call<{ id: string }>('POST', '/api/v1/agent-accesses', {
    name: 'e2e',
    kind: 'scripted',
    edge_id: edgeId,
    installation_id: installation.id,
    project: projectDir,
  });
  if (created.status !== 200) throw new Error(`creating the access answered ${created.status}`);
  const accessId = created.body.data!.id;
  const started = await client.agent<TurnSnapshot>({
    edge_id: edgeId,
    action: 'start',
    access_id: accessId,
    installation_id: installation.id,
    project: projectDir,
  });
  if (started.status !== 'ok') throw new Error(`start answered ${started.status}`);
  const base = { edge_id: edgeId, access_id: accessId, session_id: started.session_id };
  const sent = await client.agent<TurnSnapshot>({ ...base, action: 'send', text });
  if (sent.status !== 'ok') throw new Error(`send answered ${sent.status}`);
  const finished = await eventually(async () => {
    const polled = await client.agent<TurnSnapshot>({ ...base, action: 'poll' });
    return polled.status === 'ok' && !polled.running && polled.turn_timing?.finished_ms != null
      ? polled
      : undefined;
  }, 'the turn finishing');
  return { sent, finished };
}
