import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createdThisMinute, prepareGeminiHome } from './gemini-home.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'gemini-home-'));
});
afterEach(() => rm(home, { recursive: true, force: true }));

describe('prepareGeminiHome', () => {
  it('enforces the offline settings and keeps the owner’s other settings', async () => {
    await mkdir(path.join(home, '.gemini'));
    await writeFile(
      path.join(home, '.gemini', 'settings.json'),
      JSON.stringify({ model: { name: 'gemini-2.5-pro' }, telemetry: { enabled: true } }),
    );
    await prepareGeminiHome(home, true);
    const settings = JSON.parse(await readFile(path.join(home, '.gemini', 'settings.json'), 'utf8'));
    expect(settings).toEqual({
      model: { name: 'gemini-2.5-pro' },
      telemetry: { enabled: false },
      privacy: { usageStatisticsEnabled: false },
      general: {
        enableAutoUpdate: false,
        enableAutoUpdateNotification: false,
        sessionRetention: { enabled: false },
      },
      security: { auth: { selectedType: 'gemini-api-key' } },
    });
  });
});

describe('createdThisMinute', () => {
  const id = '0a1b2c3d-aaaa-bbbb-cccc-000000000000';
  const chats = () => path.join(home, '.gemini', 'tmp', 'project', 'chats');

  it('sees a session file stamped with the current minute', async () => {
    await mkdir(chats(), { recursive: true });
    const now = new Date('2026-12-03T22:15:30Z');
    await writeFile(path.join(chats(), 'session-2026-12-03T22-15-0a1b2c3d.jsonl'), '');
    expect(await createdThisMinute(home, id, now)).toBe(true);
    expect(await createdThisMinute(home, id, new Date('2026-12-03T22:16:01Z'))).toBe(false);
    expect(await createdThisMinute(home, 'ffffffff-0000', now)).toBe(false);
  });

  it('is false without any session folder', async () => {
    expect(await createdThisMinute(home, id)).toBe(false);
  });
});
