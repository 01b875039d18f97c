import { z } from 'zod';
import {
  auditStreamEnv,
  parseDuration,
  parseSize,
  sessionsStreamEnv,
  sessionsStreamSettings,
} from './jetstream.js';

const sessions = z.object(sessionsStreamEnv);

describe('stream settings', () => {
  it('defaults to one replica on file, 14 days and no size limit for the journal; 30 days for audit', () => {
    expect(sessionsStreamSettings(sessions.parse({}))).toEqual({
      replicas: 1,
      maxAgeMs: 14 * 86_400_000,
      maxBytes: 0,
      storage: 'file',
    });
    expect(z.object(auditStreamEnv).parse({}).TETHER_AUDIT_STREAM_MAX_AGE).toBe(30 * 86_400_000);
  });

  it('reads durations and sizes with units', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('36h')).toBe(36 * 3_600_000);
    expect(parseDuration('0')).toBe(0);
    expect(parseSize('512MiB')).toBe(512 * 2 ** 20);
    expect(parseSize('1048576')).toBe(2 ** 20);
    const parsed = sessions.parse({
      TETHER_JETSTREAM_REPLICAS: '3',
      TETHER_SESSIONS_STREAM_MAX_AGE: '7d',
      TETHER_SESSIONS_STREAM_MAX_BYTES: '64GiB',
      TETHER_SESSIONS_STREAM_STORAGE: 'memory',
    });
    expect(sessionsStreamSettings(parsed)).toEqual({
      replicas: 3,
      maxAgeMs: 7 * 86_400_000,
      maxBytes: 64 * 2 ** 30,
      storage: 'memory',
    });
  });

  it.each([
    ['TETHER_JETSTREAM_REPLICAS', '0'],
    ['TETHER_JETSTREAM_REPLICAS', '7'],
    ['TETHER_SESSIONS_STREAM_MAX_AGE', '14'],
    ['TETHER_SESSIONS_STREAM_MAX_AGE', '500ms'],
    ['TETHER_SESSIONS_STREAM_MAX_AGE', '-1d'],
    ['TETHER_SESSIONS_STREAM_MAX_BYTES', '10KiB'],
    ['TETHER_SESSIONS_STREAM_MAX_BYTES', '1GB'],
    ['TETHER_SESSIONS_STREAM_STORAGE', 'disk'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    const parsed = sessions.safeParse({ [name]: value });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual([name]);
  });
});
