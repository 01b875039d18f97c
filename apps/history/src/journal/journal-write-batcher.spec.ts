// The journal write path's SessionBatcher: what one unit of work (one transaction) gets.
import { SessionBatcher, type SessionItems } from './session-batcher.js';

/** Lets the batcher's deferred start (setImmediate) and any settled work run. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A batcher whose units stay running until released, recording what each one got. */
function recording(concurrency: number, maxBatch: number, maxItems: number) {
  const units: { batches: SessionItems<string>[]; release: () => void }[] = [];
  const batcher = new SessionBatcher<string>(
    concurrency,
    maxBatch,
    maxItems,
    (batches) =>
      new Promise<void>((resolve) => {
        units.push({ batches, release: resolve });
      }),
  );
  const shape = (index: number) =>
    units[index]!.batches.map((batch) => `${batch.session}:${batch.items.join(',')}`);
  return { batcher, units, shape };
}

describe('SessionBatcher', () => {
  it('shares the messages of one event-loop turn between the free slots, several sessions per unit', async () => {
    const { batcher, units, shape } = recording(2, 128, 256);
    for (const session of ['a', 'b', 'c', 'd']) batcher.push(session, `${session}1`);
    batcher.push('a', 'a2');
    await turn();

    expect(units).toHaveLength(2);
    expect(shape(0)).toEqual(['a:a1,a2', 'b:b1']);
    expect(shape(1)).toEqual(['c:c1', 'd:d1']);
  });

  it('never runs two units of one session at once; what arrives meanwhile forms its next batch', async () => {
    const { batcher, units, shape } = recording(2, 128, 256);
    batcher.push('a', 'a1');
    await turn();
    batcher.push('a', 'a2');
    batcher.push('a', 'a3');
    await turn();
    // A slot is free, but session a is still being written.
    expect(units).toHaveLength(1);

    units[0]!.release();
    await turn();
    expect(units).toHaveLength(2);
    expect(shape(1)).toEqual(['a:a2,a3']);
  });

  it('caps a unit at maxItems over its sessions and maxBatch per session; the rest waits its turn', async () => {
    const { batcher, units, shape } = recording(1, 2, 3);
    for (const item of ['a1', 'a2', 'a3']) batcher.push('a', item);
    batcher.push('b', 'b1');
    batcher.push('c', 'c1');
    await turn();
    expect(shape(0)).toEqual(['a:a1,a2', 'b:b1']);

    units[0]!.release();
    await turn();
    expect(shape(1)).toEqual(['c:c1', 'a:a3']);
  });

  it('hands back what is queued but not started, and reports idle once the running units end', async () => {
    const { batcher, units } = recording(1, 1, 1);
    batcher.push('a', 'a1');
    batcher.push('b', 'b1');
    await turn();
    expect(batcher.takeQueued()).toEqual(['b1']);

    let idle = false;
    void batcher.idle().then(() => (idle = true));
    await turn();
    expect(idle).toBe(false);
    units[0]!.release();
    await turn();
    expect(idle).toBe(true);
    expect(units).toHaveLength(1);
  });
});
