import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subjects } from '#contracts';
import { createDeployment, keyFromSeed } from '#nats-auth';
import { holdsKeys, writeDeployment } from './write.js';

// Key generation and signing are pure JavaScript; a loaded CI box needs more than jest's 5 s.
const SETUP_TIMEOUT_MS = 60_000;

describe('nats:setup output', () => {
  it(
    'writes every service its creds, history its authority, and keys readable by the owner only',
    async () => {
      const out = mkdtempSync(join(tmpdir(), 'nats-setup-'));
      try {
        expect(holdsKeys(out)).toBe(false);
        const deployment = await createDeployment({ subjects: new Subjects(), resolverDir: '/data/jwt' });
        writeDeployment(out, deployment);
        expect(holdsKeys(out)).toBe(true);
        for (const service of ['api', 'session-router', 'history', 'subscriber', 'system']) {
          const creds = readFileSync(join(out, 'creds', `${service}.creds`), 'utf8');
          expect(creds).toMatch(/BEGIN NATS USER JWT[\s\S]*BEGIN USER NKEY SEED/);
          expect(statSync(join(out, 'creds', `${service}.creds`)).mode & 0o077).toBe(0);
        }
        const signing = readFileSync(join(out, 'keys', 'account-signing.nk'), 'utf8');
        expect(keyFromSeed(signing).getPublicKey()).toMatch(/^A/);
        expect(readFileSync(join(out, 'account.pub'), 'utf8').trim()).toBe(deployment.account);
        const auth = readFileSync(join(out, 'auth.conf'), 'utf8');
        expect(auth).toContain(`system_account: ${deployment.systemAccount}`);
        expect(auth).toContain('type: full');
        // No seed in the server's configuration.
        expect(auth).not.toMatch(/\bS[AOU][A-Z2-7]{56}\b/);
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    },
    SETUP_TIMEOUT_MS,
  );

  it('ships one server configuration for docker-compose and the Kubernetes component', () => {
    expect(readFileSync('deploy/k8s/components/nats-operator-server/nats-server.conf', 'utf8')).toBe(
      readFileSync('deploy/nats/nats-server.conf', 'utf8'),
    );
  });
});
