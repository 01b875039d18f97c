import { DISPATCH_RECORDS_PER_SESSION, DispatchRecords } from './dispatch-records.js';

describe('DispatchRecords', () => {
  const accepted = (session: string, id: string) =>
    ({ owner: 'o', session, id, state: 'accepted', itemId: 'm:0:0' }) as const;

  it('keeps the first outcome of an id and never overwrites it', () => {
    const records = new DispatchRecords();
    records.record(accepted('s', '1'));
    records.record({ owner: 'o', session: 's', id: '1', state: 'rejected', status: 'busy' });
    expect(records.describe('o', 's', '1')).toEqual({ state: 'accepted', item_id: 'm:0:0' });
    expect(records.describe('other', 's', '1')).toEqual({ state: 'absent' });
    expect(records.describe('o', 's2', '1')).toEqual({ state: 'absent' });
  });

  it('forgets a record after its retention', () => {
    let now = 1_000;
    const records = new DispatchRecords(() => now, 500);
    records.record(accepted('s', '1'));
    now = 1_499;
    expect(records.find('o', 's', '1')).toBeDefined();
    now = 1_500;
    expect(records.find('o', 's', '1')).toBeUndefined();
    expect(records.size).toBe(0);
  });

  it('bounds the records of one session, evicting its oldest first and sparing other sessions', () => {
    const records = new DispatchRecords();
    records.record(accepted('other', 'x'));
    for (let i = 0; i <= DISPATCH_RECORDS_PER_SESSION; i += 1) records.record(accepted('s', String(i)));
    expect(records.find('o', 's', '0')).toBeUndefined();
    expect(records.find('o', 's', '1')).toBeDefined();
    expect(records.find('o', 's', String(DISPATCH_RECORDS_PER_SESSION))).toBeDefined();
    expect(records.find('o', 'other', 'x')).toBeDefined();
    expect(records.size).toBe(DISPATCH_RECORDS_PER_SESSION + 1);
  });
});
