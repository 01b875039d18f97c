import { Limits, verifyEdgeToken } from '#contracts';
import { RpcRemoteError } from '#messaging';
import {
  HARNESS_TIMEOUT_MS,
  SLOW_TEST_TIMEOUT_MS,
  startHarness,
  type HistoryHarness,
} from '../../support/history.js';
import { TEST_EDGE_SECRET } from '#test-support';

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
    expect(verifyEdgeToken(TEST_EDGE_SECRET, reply.connector.id, reply.edge_token)).toBe(true);
    expect(verifyEdgeToken(TEST_EDGE_SECRET, `${reply.connector.id}0`, reply.edge_token)).toBe(false);
  });

  it(
    'lists only the actor’s connectors, page by page, and refuses enrollments past the bound',
    async () => {
      const mine = await h.call('historyConnectorEnroll', { actor_id: 'bob', name: 'one' });
      const second = await h.call('historyConnectorEnroll', { actor_id: 'bob', name: 'two' });
      await h.call('historyConnectorEnroll', { actor_id: 'carol', name: 'three' });
      const { connectors } = await h.call('historyConnectorList', { actor_id: 'bob' });
      expect(connectors).toEqual([mine.connector, second.connector]);

      for (let i = connectors.length; i < Limits.CONNECTORS_PER_ACTOR_MAX; i += 1) {
        await h.call('historyConnectorEnroll', { actor_id: 'bob', name: `bulk ${i}` });
      }
      const refused = h.call('historyConnectorEnroll', { actor_id: 'bob', name: 'one too many' });
      await expect(refused).rejects.toMatchObject({ code: 'limit_reached' });

      // Every connector is reachable through the pages, each once, in id order.
      const seen: string[] = [];
      let after: string | undefined;
      do {
        const page = await h.call('historyConnectorList', {
          actor_id: 'bob',
          limit: 7,
          ...(after && { after }),
        });
        expect(page.connectors.length).toBeLessThanOrEqual(7);
        seen.push(...page.connectors.map((connector) => connector.id));
        after = page.next_after;
      } while (after);
      expect(seen).toHaveLength(Limits.CONNECTORS_PER_ACTOR_MAX);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.map(BigInt)).toEqual([...seen.map(BigInt)].sort((a, b) => (a < b ? -1 : 1)));
      expect(seen).not.toContain('one too many');
    },
    SLOW_TEST_TIMEOUT_MS,
  );

  it('rotates one connector’s credentials: its old token stops, other connectors keep theirs', async () => {
    const first = await h.call('historyConnectorEnroll', { actor_id: 'erin', name: 'a' });
    const other = await h.call('historyConnectorEnroll', { actor_id: 'erin', name: 'b' });
    expect(await h.call('historyEdgeCredential', { edge_id: first.connector.id })).toEqual({ generation: 0 });
    const rotated = await h.call('historyConnectorRotate', { actor_id: 'erin', edge_id: first.connector.id });
    expect(rotated.edge_token).not.toBe(first.edge_token);
    const { generation } = await h.call('historyEdgeCredential', { edge_id: first.connector.id });
    expect(generation).toBe(1);
    expect(verifyEdgeToken(TEST_EDGE_SECRET, first.connector.id, rotated.edge_token, generation)).toBe(true);
    expect(verifyEdgeToken(TEST_EDGE_SECRET, first.connector.id, first.edge_token, generation)).toBe(false);
    const untouched = await h.call('historyEdgeCredential', { edge_id: other.connector.id });
    expect(
      verifyEdgeToken(TEST_EDGE_SECRET, other.connector.id, other.edge_token, untouched.generation),
    ).toBe(true);
    // Someone else's connector: not found, nothing changes.
    await expect(
      h.call('historyConnectorRotate', { actor_id: 'mallory', edge_id: other.connector.id }),
    ).rejects.toMatchObject({ code: 'connector_not_found' });
    expect(await h.call('historyEdgeCredential', { edge_id: other.connector.id })).toEqual({ generation: 0 });
  });

  it('deletes a connector for its owner only; its credentials and accesses go with it', async () => {
    const doomed = await h.call('historyConnectorEnroll', { actor_id: 'frank', name: 'old laptop' });
    const kept = await h.call('historyConnectorEnroll', { actor_id: 'frank', name: 'desktop' });
    await expect(
      h.call('historyConnectorDelete', { actor_id: 'mallory', edge_id: doomed.connector.id }),
    ).rejects.toMatchObject({ code: 'connector_not_found' });
    const reply = await h.call('historyConnectorDelete', { actor_id: 'frank', edge_id: doomed.connector.id });
    expect(reply.connector).toEqual(doomed.connector);
    expect((await h.call('historyConnectorList', { actor_id: 'frank' })).connectors).toEqual([
      kept.connector,
    ]);
    await expect(h.call('historyEdgeCredential', { edge_id: doomed.connector.id })).rejects.toMatchObject({
      code: 'connector_not_found',
    });
    await expect(
      h.call('historyConnectorDelete', { actor_id: 'frank', edge_id: doomed.connector.id }),
    ).rejects.toMatchObject({ code: 'connector_not_found' });
  });

  it('refuses an enrollment without a name and stores nothing', async () => {
    await expect(h.call('historyConnectorEnroll', { actor_id: 'dave', name: '   ' })).rejects.toBeInstanceOf(
      RpcRemoteError,
    );
    expect((await h.call('historyConnectorList', { actor_id: 'dave' })).connectors).toEqual([]);
  });
});
