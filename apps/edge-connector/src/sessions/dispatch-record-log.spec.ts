import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DISPATCH_RECORDS_FILE, DispatchRecordLog } from './dispatch-record-log.js';
import { DISPATCH_RECORDS_PER_SESSION, DispatchRecords } from './dispatch-records.js';

const RETENTION_MS = 10_000;

describe('dispatch records on disk', () => {
  let dir: string;
  let file: string;
  let warnings: string[];
  let now: number;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'dispatch-records-'));
    file = join(dir, DISPATCH_RECORDS_FILE);
    warnings = [];
    now = 1_000_000;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** What one edge process holds: its records, backed by the file of the data folder. */
  const process = () =>
    new DispatchRecords(
      () => now,
      RETENTION_MS,
      new DispatchRecordLog(file, { warn: (message: string) => warnings.push(message) }),
    );

  it('a restarted process still answers the outcomes the killed one recorded', () => {
    const first = process();
    first.record({ owner: 'o', session: 's', id: 'op-1', state: 'accepted', itemId: 'm:0:0' });
    first.record({ owner: 'o', session: 's', id: 'op-2', state: 'rejected', status: 'busy' });
    // No close: a killed process does not get to.
    const second = process();
    expect(second.describe('o', 's', 'op-1')).toEqual({ state: 'accepted', item_id: 'm:0:0' });
    expect(second.describe('o', 's', 'op-2')).toEqual({ state: 'rejected', status: 'busy' });
    expect(second.describe('intruder', 's', 'op-1')).toEqual({ state: 'absent' });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(warnings).toEqual([]);
  });

  it('drops what expired while no process ran, and keeps the first outcome of an id', () => {
    const first = process();
    first.record({ owner: 'o', session: 's', id: 'old', state: 'accepted' });
    now += RETENTION_MS / 2;
    first.record({ owner: 'o', session: 's', id: 'new', state: 'accepted' });
    first.record({ owner: 'o', session: 's', id: 'new', state: 'rejected', status: 'busy' });
    now += RETENTION_MS / 2;
    const second = process();
    expect(second.describe('o', 's', 'old')).toEqual({ state: 'absent' });
    expect(second.describe('o', 's', 'new')).toEqual({ state: 'accepted' });
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('skips a line a crash cut short, and anything that is not a record', () => {
    const first = process();
    first.record({ owner: 'o', session: 's', id: 'kept', state: 'accepted' });
    appendFileSync(file, '{"owner":"o","session":"s","id":"x","state":"maybe","expiresAt":1}\n');
    appendFileSync(file, '{"owner":"o","session":"s","id":"torn","sta');
    const second = process();
    expect(second.describe('o', 's', 'kept')).toEqual({ state: 'accepted' });
    expect(second.describe('o', 's', 'torn')).toEqual({ state: 'absent' });
    expect(warnings).toEqual([expect.stringContaining('2 unreadable line(s)')]);
    // The next record starts on a line of its own, not at the end of the torn one.
    second.record({ owner: 'o', session: 's', id: 'after', state: 'accepted' });
    expect(process().describe('o', 's', 'after')).toEqual({ state: 'accepted' });
  });

  it('rewrites the file once it holds twice the live records, keeping exactly those', () => {
    const records = process();
    const total = 2 * DISPATCH_RECORDS_PER_SESSION + 1;
    // One session keeps at most DISPATCH_RECORDS_PER_SESSION: the oldest are evicted as it goes.
    for (let i = 0; i < total; i += 1)
      records.record({ owner: 'o', session: 's', id: `op-${i}`, state: 'accepted' });
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines.length).toBeLessThanOrEqual(DISPATCH_RECORDS_PER_SESSION + 1);
    const reloaded = process();
    expect(reloaded.size).toBe(DISPATCH_RECORDS_PER_SESSION);
    expect(reloaded.describe('o', 's', `op-${total - 1}`)).toEqual({ state: 'accepted' });
    expect(reloaded.describe('o', 's', 'op-0')).toEqual({ state: 'absent' });
  });

  it('keeps working in memory when the folder cannot be written', () => {
    const records = new DispatchRecords(
      () => now,
      RETENTION_MS,
      new DispatchRecordLog(join(dir, 'missing', DISPATCH_RECORDS_FILE), {
        warn: (message: string) => warnings.push(message),
      }),
    );
    records.record({ owner: 'o', session: 's', id: 'op', state: 'accepted' });
    expect(records.describe('o', 's', 'op')).toEqual({ state: 'accepted' });
    expect(warnings).toEqual([expect.stringContaining('not written')]);
  });
});
