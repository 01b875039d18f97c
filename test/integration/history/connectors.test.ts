import { Limits, verifyEdgeToken } from '#contracts';
import { RpcRemoteError } from '#messaging';
import {
  EDGE_SECRET,
  HARNESS_TIMEOUT_MS,
  SLOW_TEST_TIMEOUT_MS,
  startHarness,
  type HistoryHarness,
} from './history-harness.js';

describe('history: connectors', () => {
  let h: HistoryHarness;

  beforeAll(async () => {
    h = await startHarness('connectors');
  }, HARNESS_TIMEOUT_MS);
  afterAll(() => h.close(), HARNESS_TIMEOUT_MS);

  it('enrolls a connector for the actor and mints its edge token', async () => {
    const reply = await h.call('historyConnectorEnroll', {
      actor_id: 'alice',
      name: 'laptop',
      device: 'alice-mbp',
    });
    expect(reply.connector).toEqual({
      id: expect.stringMatching(/^[1-9][0-9]*$/),
      name: 'laptop',
      device: 'alice-mbp',
    });
    expect(verifyEdgeToken(EDGE_SECRET, reply.connector.id, reply.edge_token)).toBe(true);
    expect(verifyEdgeToken(EDGE_SECRET, `${reply.connector.id}0`, reply.edge_token)).toBe(false);
  });

  it(
    'lists only the actor’s connectors, at most the contract maximum',
    async () => {
      const mine = await h.call('historyConnectorEnroll', { actor_id: 'bob', name: 'one' });
      const second = await h.call('historyConnectorEnroll', { actor_id: 'bob', name: 'two' });
      await h.call('historyConnectorEnroll', { actor_id: 'carol', name: 'three' });
      const { connectors } = await h.call('historyConnectorList', { actor_id: 'bob' });
      expect(connectors).toEqual([mine.connector, second.connector]);

      for (let i = connectors.length; i < Limits.CONNECTORS_LIST_MAX + 2; i += 1) {
        await h.call('historyConnectorEnroll', { actor_id: 'bob', name: `bulk ${i}` });
      }
      expect((await h.call('historyConnectorList', { actor_id: 'bob' })).connectors).toHaveLength(
        Limits.CONNECTORS_LIST_MAX,
      );
    },
    SLOW_TEST_TIMEOUT_MS,
  );

  it('refuses an enrollment without a name and stores nothing', async () => {
    await expect(h.call('historyConnectorEnroll', { actor_id: 'dave', name: '   ' })).rejects.toBeInstanceOf(
      RpcRemoteError,
    );
    expect((await h.call('historyConnectorList', { actor_id: 'dave' })).connectors).toEqual([]);
  });
});
