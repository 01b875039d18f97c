import { decodeJson, RpcRemoteError } from '#messaging';
import { HARNESS_TIMEOUT_MS, startHarness, type HistoryHarness } from '../../support/history.js';

const OWNER = 'owner-a';
const OTHER = 'owner-b';

function access(edgeId: string, overrides: Record<string, string> = {}) {
  return {
    name: 'Laptop codex',
    kind: 'codex',
    edge_id: edgeId,
    installation_id: '0123456789abcdef0123456789abcdef',
    project: '/home/dev/project',
    ...overrides,
  };
}

async function errorCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RpcRemoteError) return error.code;
    throw error;
  }
  throw new Error('expected the request to fail');
}

describe('history: agent accesses and authorization', () => {
  let h: HistoryHarness;
  let edge: string;
  let otherEdge: string;

  beforeAll(async () => {
    h = await startHarness('access');
    edge = (await h.call('historyConnectorEnroll', { actor_id: OWNER, name: 'laptop' })).connector.id;
    otherEdge = (await h.call('historyConnectorEnroll', { actor_id: OTHER, name: 'desktop' })).connector.id;
  }, HARNESS_TIMEOUT_MS);
  afterAll(() => h.close(), HARNESS_TIMEOUT_MS);

  it('creates, lists, updates and deletes an access of the actor', async () => {
    const { access: created } = await h.call('historyAccessCreate', {
      actor_id: OWNER,
      access: access(edge),
    });
    expect(created).toEqual({ id: expect.stringMatching(/^[0-9a-f]{32}$/), ...access(edge) });

    const list = await h.call('historyAccessList', { actor_id: OWNER, page: 1, page_size: 20 });
    expect(list).toEqual({ items: [created], total: 1, page: 1, page_size: 20 });
    expect((await h.call('historyAccessList', { actor_id: OTHER, page: 1, page_size: 20 })).total).toBe(0);

    const { access: updated } = await h.call('historyAccessUpdate', {
      actor_id: OWNER,
      id: created.id,
      access: access(edge, { name: 'Renamed', project: '/srv/other' }),
    });
    expect(updated).toEqual({ ...created, name: 'Renamed', project: '/srv/other' });

    const { access: deleted } = await h.call('historyAccessDelete', { actor_id: OWNER, id: created.id });
    expect(deleted.id).toBe(created.id);
    expect((await h.call('historyAccessList', { actor_id: OWNER, page: 1, page_size: 20 })).total).toBe(0);
    expect(await errorCode(h.call('historyAccessDelete', { actor_id: OWNER, id: created.id }))).toBe(
      'access_not_found',
    );
  });

  it('pages the list newest first', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      ids.push(
        (await h.call('historyAccessCreate', { actor_id: 'pager', access: access(await pagerEdge()) })).access
          .id,
      );
    }
    const first = await h.call('historyAccessList', { actor_id: 'pager', page: 1, page_size: 2 });
    const third = await h.call('historyAccessList', { actor_id: 'pager', page: 3, page_size: 2 });
    expect(first.total).toBe(5);
    expect(first.items.map((item) => item.id)).toEqual([ids[4], ids[3]]);
    expect(third.items.map((item) => item.id)).toEqual([ids[0]]);
  });

  let pagerEdgeId: string | undefined;
  async function pagerEdge(): Promise<string> {
    pagerEdgeId ??= (await h.call('historyConnectorEnroll', { actor_id: 'pager', name: 'pager' })).connector
      .id;
    return pagerEdgeId;
  }

  it('refuses out-of-bounds pages and unknown kinds without changing anything', async () => {
    for (const [page, pageSize] of [
      [0, 20],
      [1, 0],
      [1, 101],
      [1.5, 20],
    ] as const) {
      expect(
        await errorCode(h.call('historyAccessList', { actor_id: OWNER, page, page_size: pageSize })),
      ).toBe('invalid_request');
    }
    expect(
      await errorCode(
        h.call('historyAccessCreate', { actor_id: OWNER, access: access(edge, { kind: 'no-such-agent' }) }),
      ),
    ).toBe('invalid_request');
    expect((await h.call('historyAccessList', { actor_id: OWNER, page: 1, page_size: 20 })).total).toBe(0);
  });

  it('requires the connector to be the actor’s on create and update', async () => {
    expect(
      await errorCode(h.call('historyAccessCreate', { actor_id: OWNER, access: access(otherEdge) })),
    ).toBe('connector_not_found');
    expect(
      await errorCode(h.call('historyAccessCreate', { actor_id: OWNER, access: access('999999') })),
    ).toBe('connector_not_found');
    // A malformed id is refused by the contract schema before anything is looked up.
    expect(
      await errorCode(h.call('historyAccessCreate', { actor_id: OWNER, access: access('not-a-number') })),
    ).toBe('invalid_request');
    const { access: mine } = await h.call('historyAccessCreate', { actor_id: OWNER, access: access(edge) });
    expect(
      await errorCode(
        h.call('historyAccessUpdate', { actor_id: OWNER, id: mine.id, access: access(otherEdge) }),
      ),
    ).toBe('connector_not_found');
    const stored = await h.call('historyAccessList', { actor_id: OWNER, page: 1, page_size: 20 });
    expect(stored.items).toEqual([mine]);
    await h.call('historyAccessDelete', { actor_id: OWNER, id: mine.id });
  });

  it('answers access_not_found for another actor’s or a missing access', async () => {
    const { access: theirs } = await h.call('historyAccessCreate', {
      actor_id: OTHER,
      access: access(otherEdge),
    });
    expect(
      await errorCode(
        h.call('historyAccessUpdate', { actor_id: OWNER, id: theirs.id, access: access(edge) }),
      ),
    ).toBe('access_not_found');
    expect(await errorCode(h.call('historyAccessDelete', { actor_id: OWNER, id: theirs.id }))).toBe(
      'access_not_found',
    );
    expect(await errorCode(h.call('historyAccessDelete', { actor_id: OWNER, id: 'f'.repeat(32) }))).toBe(
      'access_not_found',
    );
    expect(await errorCode(h.call('historyAccessDelete', { actor_id: OWNER, id: 'nope' }))).toBe(
      'access_not_found',
    );
    // The owner still has it, unchanged.
    expect((await h.call('historyAccessList', { actor_id: OTHER, page: 1, page_size: 20 })).items).toEqual([
      theirs,
    ]);
  });

  it("tells the api replicas when an actor's grants change, and only then", async () => {
    const notices: unknown[] = [];
    const subscription = h.nc.subscribe(h.subjects.grantsChanged, {
      callback: (_error, msg) => {
        notices.push(decodeJson(msg.data));
      },
    });
    await h.nc.flush();
    try {
      const { access: created } = await h.call('historyAccessCreate', {
        actor_id: OWNER,
        access: access(edge),
      });
      await h.call('historyAccessUpdate', {
        actor_id: OWNER,
        id: created.id,
        access: access(edge, { project: '/srv/moved' }),
      });
      // Refused changes change nothing and announce nothing.
      expect(await errorCode(h.call('historyAccessDelete', { actor_id: OTHER, id: created.id }))).toBe(
        'access_not_found',
      );
      await h.call('historyAccessDelete', { actor_id: OWNER, id: created.id });
      await h.call('historyConnectorEnroll', { actor_id: OTHER, name: 'spare' });
      // The notice is published before the reply, on the same connection, so it has arrived.
      await h.nc.flush();
      expect(notices).toEqual([{ actor_id: OWNER }, { actor_id: OWNER }, { actor_id: OTHER }]);
    } finally {
      subscription.unsubscribe();
    }
  });

  describe('historyAuthorize', () => {
    it('accepts the actor’s connector, with or without the actor’s access for it', async () => {
      expect(await h.call('historyAuthorize', { actor_id: OWNER, edge_id: edge })).toEqual({ ok: true });
      const { access: mine } = await h.call('historyAccessCreate', { actor_id: OWNER, access: access(edge) });
      expect(
        await h.call('historyAuthorize', { actor_id: OWNER, edge_id: edge, access_id: mine.id }),
      ).toEqual({
        ok: true,
        access: mine,
      });
    });

    it('refuses a foreign or unknown connector', async () => {
      expect(await errorCode(h.call('historyAuthorize', { actor_id: OWNER, edge_id: otherEdge }))).toBe(
        'connector_not_found',
      );
      expect(await errorCode(h.call('historyAuthorize', { actor_id: OWNER, edge_id: '987654321' }))).toBe(
        'connector_not_found',
      );
      expect(await errorCode(h.call('historyAuthorize', { actor_id: OWNER, edge_id: '0' }))).toBe(
        'invalid_request',
      );
    });

    it('refuses an access that is foreign, missing or saved for another connector', async () => {
      const { access: theirs } = await h.call('historyAccessCreate', {
        actor_id: OTHER,
        access: access(otherEdge),
      });
      expect(
        await errorCode(h.call('historyAuthorize', { actor_id: OWNER, edge_id: edge, access_id: theirs.id })),
      ).toBe('access_not_found');
      expect(
        await errorCode(
          h.call('historyAuthorize', { actor_id: OWNER, edge_id: edge, access_id: 'a'.repeat(32) }),
        ),
      ).toBe('access_not_found');
      const { connector: second } = await h.call('historyConnectorEnroll', {
        actor_id: OWNER,
        name: 'second',
      });
      const { access: onSecond } = await h.call('historyAccessCreate', {
        actor_id: OWNER,
        access: access(second.id),
      });
      expect(
        await errorCode(
          h.call('historyAuthorize', { actor_id: OWNER, edge_id: edge, access_id: onSecond.id }),
        ),
      ).toBe('access_not_found');
    });
  });
});
