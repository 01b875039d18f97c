import { jest } from '@jest/globals';
import type { NatsBus } from '#messaging';
import { Subjects } from '#contracts';
import type { TitleOverrideRepository } from './title-override.repository.js';
import { TITLE_CACHE_TTL_MS, TitleOverrides } from './title-overrides.js';

const subjects = new Subjects('spec');

/** A Redis stand-in whose reads wait until the test lets them answer. */
function overrides() {
  const stored = new Map<string, string>();
  const reads: (() => void)[] = [];
  const repository = {
    // The value is read when the command is sent; the answer comes when the test lets it.
    get: jest.fn((id: string) => {
      const value = stored.get(id) ?? null;
      return new Promise<string | null>((resolve) => reads.push(() => resolve(value)));
    }),
    set: (id: string, title: string) => Promise.resolve(void stored.set(id, title)),
    clear: (id: string) => Promise.resolve(void stored.delete(id)),
  } as unknown as TitleOverrideRepository;
  const published: string[] = [];
  const bus = {
    subjects,
    nc: { publish: (subject: string) => published.push(subject) },
  } as unknown as NatsBus;
  const answerReads = () => reads.splice(0).forEach((answer) => answer());
  return { titles: new TitleOverrides(repository, bus), repository, published, answerReads };
}

describe('TitleOverrides', () => {
  afterEach(() => jest.restoreAllMocks());

  it('reads Redis once per session until a change or the TTL', async () => {
    const { titles, repository, answerReads } = overrides();
    let now = 1_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const first = titles.get('s1');
    answerReads();
    expect(await first).toBeNull();
    expect(await titles.get('s1')).toBeNull();
    expect(repository.get).toHaveBeenCalledTimes(1);
    now += TITLE_CACHE_TTL_MS;
    const lapsed = titles.get('s1');
    answerReads();
    await lapsed;
    expect(repository.get).toHaveBeenCalledTimes(2);
  });

  it('a rename drops the copy here and announces it to the other replicas', async () => {
    const { titles, published, answerReads } = overrides();
    const before = titles.get('s1');
    answerReads();
    expect(await before).toBeNull();
    await titles.set('s1', 'Renamed');
    expect(published).toEqual([subjects.sessionTitleChanged('s1')]);
    const after = titles.get('s1');
    answerReads();
    expect(await after).toBe('Renamed');
    await titles.clear('s1');
    expect(published).toHaveLength(2);
    const cleared = titles.get('s1');
    answerReads();
    expect(await cleared).toBeNull();
  });

  it('does not keep a read that overlapped a change: it may hold the value from before it', async () => {
    const { titles, repository, answerReads } = overrides();
    const stale = titles.get('s1'); // reads before the rename lands...
    await titles.set('s1', 'Renamed');
    answerReads(); // ...and answers after it, with the old value
    expect(await stale).toBeNull();
    const next = titles.get('s1');
    answerReads();
    expect(await next).toBe('Renamed');
    expect(repository.get).toHaveBeenCalledTimes(2);
  });
});
