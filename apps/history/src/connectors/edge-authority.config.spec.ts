import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount, createOperator, seedOf } from '#nats-auth';
import { loadHistoryConfig } from '../config.js';

const BASE = {
  TETHER_EDGE_SECRET: 'history-spec-edge-secret-0123456789',
  TETHER_HISTORY_KEY: 'history-spec-at-rest-key-0123456789abcdef',
  TETHER_JOURNAL_KEY: 'history-spec-journal-key-0123456789abcdef',
};

describe('history config: the edge authority', () => {
  const dir = mkdtempSync(join(tmpdir(), 'edge-authority-'));
  const account = createAccount();
  const accountSigning = createAccount();
  const operatorSigning = createOperator();
  const systemCreds = join(dir, 'system.creds');
  const signingFile = join(dir, 'account-signing.nk');
  writeFileSync(systemCreds, 'creds');
  writeFileSync(signingFile, `${seedOf(accountSigning)}\n`);
  const full = {
    ...BASE,
    TETHER_NATS_ACCOUNT: account.getPublicKey(),
    TETHER_NATS_ACCOUNT_SIGNING_KEY: signingFile,
    TETHER_NATS_OPERATOR_SIGNING_KEY: seedOf(operatorSigning),
    TETHER_NATS_SYSTEM_CREDS: systemCreds,
  };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is off without its variables (development)', () => {
    expect(loadHistoryConfig(BASE).edgeAuthority).toBeNull();
  });

  it('reads seeds inline or from files', () => {
    expect(loadHistoryConfig(full).edgeAuthority).toEqual({
      account: account.getPublicKey(),
      accountSigningSeed: seedOf(accountSigning),
      operatorSigningSeed: seedOf(operatorSigning),
      systemCredsFile: systemCreds,
    });
  });

  it('refuses a partial set, naming what is missing', () => {
    const { TETHER_NATS_SYSTEM_CREDS: _dropped, ...partial } = full;
    expect(() => loadHistoryConfig(partial)).toThrow(/TETHER_NATS_SYSTEM_CREDS: must be set/);
  });

  it('refuses keys of the wrong kind or unreadable files, without printing a seed', () => {
    const swapped = {
      ...full,
      TETHER_NATS_ACCOUNT_SIGNING_KEY: seedOf(operatorSigning),
      TETHER_NATS_OPERATOR_SIGNING_KEY: seedOf(accountSigning),
      TETHER_NATS_SYSTEM_CREDS: join(dir, 'missing.creds'),
    };
    let message = '';
    try {
      loadHistoryConfig(swapped);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/TETHER_NATS_ACCOUNT_SIGNING_KEY: must be an account seed/);
    expect(message).toMatch(/TETHER_NATS_OPERATOR_SIGNING_KEY: must be an operator seed/);
    expect(message).toMatch(/TETHER_NATS_SYSTEM_CREDS: must name a readable creds file/);
    expect(message).not.toContain(seedOf(operatorSigning));
    expect(message).not.toContain(seedOf(accountSigning));
  });
});
