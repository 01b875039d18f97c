import type { NatsConnection } from '@nats-io/transport-node';
import type { EdgeAgentRPCRequest, HistoryTranscriptRequest, Subjects } from '#contracts';
import { NatsBus, RpcRemoteError, type JournalCipher } from '#messaging';
import type { RedisClient } from '../common/redis-client.js';
import type { EdgeRpcClient } from '../common/edge-rpc.client.js';
import type { HistoryClient } from '../common/history.client.js';
import type { JournalSequencerService } from '../journal-sequencer/journal-sequencer.service.js';
import { StoredSessionsService } from './stored-sessions.service.js';
import type { TitleOverrides } from './title-overrides.js';

const SESSION = 'a'.repeat(32);
const ACCESS = 'b'.repeat(32);
const PAGE = { status: 'ok' as const, window: 1, archived: true };

const rpc = (historyBefore: string): EdgeAgentRPCRequest => ({
  version: 1,
  actor_id: 'owner',
  request: {
    action: 'transcript',
    edge_id: '1',
    access_id: ACCESS,
    session_id: SESSION,
    history_before: historyBefore,
  },
});

/** The service with a journal at `streamSequence` and a history that answers through `answer`. */
function service(streamSequence: number, answer: (request: HistoryTranscriptRequest) => Promise<unknown>) {
  const asked: HistoryTranscriptRequest[] = [];
  const history = {
    call: (name: string, request: HistoryTranscriptRequest) => {
      expect(name).toBe('historyTranscript');
      asked.push(request);
      return answer(request);
    },
  } as unknown as HistoryClient;
  const journal = {
    journaledStreamSequence: () => Promise.resolve(streamSequence),
  } as unknown as JournalSequencerService;
  const nc = { options: {} } as unknown as NatsConnection;
  const stored = new StoredSessionsService(
    {} as EdgeRpcClient,
    history,
    {} as TitleOverrides,
    journal,
    new NatsBus(nc, {} as Subjects),
    {} as RedisClient,
    {} as JournalCipher,
  );
  return { stored, asked };
}

describe('StoredSessionsService.transcript', () => {
  it('asks history to answer once it applied the journal as the router saw it', async () => {
    const { stored, asked } = service(42, () => Promise.resolve({ page: PAGE }));
    await expect(stored.transcript(rpc('2'))).resolves.toEqual(PAGE);
    expect(asked).toEqual([
      {
        actor_id: 'owner',
        access_id: ACCESS,
        edge_id: '1',
        session_id: SESSION,
        before: 2,
        stream_sequence: 42,
      },
    ]);
  });

  it('sends no position for a session with no journal', async () => {
    const { stored, asked } = service(0, () => Promise.resolve({}));
    await expect(stored.transcript(rpc('2'))).resolves.toMatchObject({ status: 'not_found' });
    expect(asked[0]).not.toHaveProperty('stream_sequence');
  });

  it('asks a history of the previous release again without the position it refuses', async () => {
    const { stored, asked } = service(42, (request) =>
      request.stream_sequence === undefined
        ? Promise.resolve({ page: PAGE })
        : Promise.reject(new RpcRemoteError('history.transcript', 'invalid_request', 'unknown key')),
    );
    await expect(stored.transcript(rpc('2'))).resolves.toEqual(PAGE);
    expect(asked.map((request) => request.stream_sequence)).toEqual([42, undefined]);
  });

  it('answers unavailable, asking once, when history fails for another reason', async () => {
    const { stored, asked } = service(42, () =>
      Promise.reject(new RpcRemoteError('history.transcript', 'unavailable', 'database down')),
    );
    await expect(stored.transcript(rpc('2'))).resolves.toMatchObject({ status: 'unavailable' });
    expect(asked).toHaveLength(1);
  });
});
