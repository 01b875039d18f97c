import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NatsSettingsError, natsConnectionOptions } from './nats-connection.js';

describe('natsConnectionOptions', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'nats-options-'));
    writeFileSync(join(dir, 'ca.pem'), 'CA');
    writeFileSync(join(dir, 'cert.pem'), 'CERT');
    writeFileSync(join(dir, 'key.pem'), 'KEY');
    writeFileSync(join(dir, 'user.creds'), 'creds');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('connects without credentials or TLS to every seed, reconnecting forever with jitter', () => {
    const options = natsConnectionOptions({ servers: 'nats://a:1, nats://b:2', name: 'api' });
    expect(options).toMatchObject({
      servers: ['nats://a:1', 'nats://b:2'],
      name: 'api',
      maxReconnectAttempts: -1,
      waitOnFirstConnect: true,
    });
    expect(options.reconnectJitter).toBeGreaterThan(0);
    expect(options.reconnectJitterTLS).toBeGreaterThan(options.reconnectJitter ?? 0);
    expect(options.authenticator).toBeUndefined();
    expect(options.tls).toBeUndefined();
  });

  it('reads the creds file and the TLS material once, into the options', () => {
    const options = natsConnectionOptions({
      servers: ['tls://a:1'],
      name: 'history',
      credsFile: join(dir, 'user.creds'),
      tls: { caFile: join(dir, 'ca.pem'), certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem') },
    });
    expect(typeof options.authenticator).toBe('function');
    expect(options.tls).toEqual({ ca: 'CA', cert: 'CERT', key: 'KEY' });
  });

  it('fails with the setting, not the path, when a file has gone', () => {
    const attempt = () =>
      natsConnectionOptions({ servers: ['nats://a:1'], name: 'api', credsFile: join(dir, 'gone.creds') });
    expect(attempt).toThrow(NatsSettingsError);
    expect(attempt).toThrow('Cannot read the NATS credentials file: ENOENT');
  });
});
