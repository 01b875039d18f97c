import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { checkNatsEnv, configProblems, loadConfig, natsEnv, natsSettings } from './index.js';

// The fragment as every service uses it: spread in, checked, turned into settings.
const schema = z
  .object({ ...natsEnv })
  .superRefine(checkNatsEnv)
  .transform(natsSettings);

describe('NATS connection settings', () => {
  let dir: string;
  let file: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'nats-config-'));
    file = join(dir, 'material.pem');
    writeFileSync(file, 'not read by the config, only checked for readability');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const problemsOf = (env: Record<string, string>) => configProblems(schema, env);

  it('defaults to one local server without credentials or TLS', () => {
    expect(loadConfig(schema, {})).toEqual({ servers: ['nats://127.0.0.1:4222'] });
  });

  it('splits comma-separated seed URLs and ignores blanks around them', () => {
    expect(loadConfig(schema, { TETHER_NATS_URL: 'nats://a:4222, tls://b:4222,,nats://c:4222' })).toEqual({
      servers: ['nats://a:4222', 'tls://b:4222', 'nats://c:4222'],
    });
  });

  it('refuses a seed that is not a NATS URL, naming the variable', () => {
    expect(problemsOf({ TETHER_NATS_URL: 'nats://a:4222,http://b' })).toEqual([
      expect.stringMatching(/^TETHER_NATS_URL: must be a comma-separated list/),
    ]);
    expect(problemsOf({ TETHER_NATS_URL: ',' })[0]).toMatch(/^TETHER_NATS_URL:/);
  });

  it('reads the creds file and the whole TLS set', () => {
    const env = {
      TETHER_NATS_CREDS: file,
      TETHER_NATS_TLS_CA: file,
      TETHER_NATS_TLS_CERT: file,
      TETHER_NATS_TLS_KEY: file,
    };
    expect(loadConfig(schema, env)).toEqual({
      servers: ['nats://127.0.0.1:4222'],
      credsFile: file,
      tls: { caFile: file, certFile: file, keyFile: file },
    });
  });

  it('takes a CA alone (server-verified TLS without a client certificate)', () => {
    expect(loadConfig(schema, { TETHER_NATS_TLS_CA: file }).tls).toEqual({ caFile: file });
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig(schema, { TETHER_NATS_CREDS: '', TETHER_NATS_TLS_CA: '' })).toEqual({
      servers: ['nats://127.0.0.1:4222'],
    });
  });

  it('refuses a file that cannot be read, naming the variable and not the path', () => {
    const missing = join(dir, 'missing.creds');
    const problems = problemsOf({ TETHER_NATS_CREDS: missing, TETHER_NATS_TLS_CA: missing });
    expect(problems).toEqual([
      'TETHER_NATS_CREDS: must name a readable file',
      'TETHER_NATS_TLS_CA: must name a readable file',
    ]);
  });

  it('refuses a client certificate without its key, and the reverse', () => {
    expect(problemsOf({ TETHER_NATS_TLS_CERT: file })).toEqual([
      'TETHER_NATS_TLS_KEY: TETHER_NATS_TLS_CERT and TETHER_NATS_TLS_KEY are set together or not at all',
    ]);
    expect(problemsOf({ TETHER_NATS_TLS_KEY: file })[0]).toMatch(/^TETHER_NATS_TLS_CERT: /);
  });
});
