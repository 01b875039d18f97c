// What `npm run nats:setup` writes, and where (docs/security.md "What an operator must do").
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SERVICE_IDENTITIES } from '#contracts';
import type { NatsDeployment } from '#nats-auth';

/** Keys and credentials: readable by the owner only. */
const SECRET_MODE = 0o600;

/** Every file the setup writes, relative to the output folder. */
export function files(deployment: NatsDeployment): Record<string, string> {
  const out: Record<string, string> = {
    'auth.conf': deployment.serverAuthConfig,
    'operator.jwt': `${deployment.operatorJwt}\n`,
    'account.pub': `${deployment.account}\n`,
    'keys/operator.nk': `${deployment.seeds.operator}\n`,
    'keys/operator-signing.nk': `${deployment.seeds.operatorSigning}\n`,
    'keys/account.nk': `${deployment.seeds.account}\n`,
    'keys/account-signing.nk': `${deployment.seeds.accountSigning}\n`,
    'keys/system-account.nk': `${deployment.seeds.systemAccount}\n`,
    'creds/system.creds': deployment.systemCreds,
    'history-edge-authority.env': [
      '# history only: it mints and revokes edge users (docs/security.md "Edge credentials").',
      '# Paths are relative to this folder: give history the paths where it mounts these files.',
      'TETHER_NATS_ACCOUNT=account.pub',
      'TETHER_NATS_ACCOUNT_SIGNING_KEY=keys/account-signing.nk',
      'TETHER_NATS_OPERATOR_SIGNING_KEY=keys/operator-signing.nk',
      'TETHER_NATS_SYSTEM_CREDS=creds/system.creds',
      '',
    ].join('\n'),
  };
  for (const identity of SERVICE_IDENTITIES) out[`creds/${identity}.creds`] = deployment.creds[identity];
  return out;
}

/** True when `out` already holds a deployment's keys (the setup then refuses without --force). */
export function holdsKeys(out: string): boolean {
  return existsSync(join(out, 'keys'));
}

export function writeDeployment(out: string, deployment: NatsDeployment): void {
  for (const [name, text] of Object.entries(files(deployment))) {
    const path = join(out, name);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, text, { mode: SECRET_MODE });
  }
}
