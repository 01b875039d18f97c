// `npm run nats:setup`: creates the NATS operator, accounts, signing keys and one user per
// service for a new deployment and writes them, with the server's authorization block, into one
// folder (docs/security.md "Setting up a deployment"):
//
//   npm run nats:setup -- [--out deploy/nats/secrets] [--namespace tether]
//                         [--resolver-dir /data/jwt] [--force]
//
// It refuses to touch a folder that already holds keys unless --force is given: new keys mean
// every service and every enrolled edge needs new credentials.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_NAMESPACE, SERVICE_IDENTITIES, Subjects } from '#contracts';
import { createDeployment, type NatsDeployment } from '#nats-auth';

const DEFAULT_OUT = 'deploy/nats/secrets';
/** The full resolver's folder inside the nats container (deploy/nats, docker-compose volume). */
const DEFAULT_RESOLVER_DIR = '/data/jwt';
/** Keys and credentials: readable by the owner only. */
const SECRET_MODE = 0o600;

function fail(message: string): never {
  process.stderr.write(`nats:setup: ${message}\n`);
  process.exit(2);
}

interface Options {
  out: string;
  namespace: string;
  resolverDir: string;
  force: boolean;
}

function options(): Options {
  try {
    const { values } = parseArgs({
      options: {
        out: { type: 'string', default: DEFAULT_OUT },
        namespace: { type: 'string', default: DEFAULT_NAMESPACE },
        'resolver-dir': { type: 'string', default: DEFAULT_RESOLVER_DIR },
        force: { type: 'boolean', default: false },
      },
    });
    return {
      out: resolve(values.out),
      namespace: values.namespace,
      resolverDir: values['resolver-dir'],
      force: values.force,
    };
  } catch (error) {
    return fail((error as Error).message);
  }
}

/** Every file the setup writes, relative to the output folder. */
function files(deployment: NatsDeployment): Record<string, string> {
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

async function main(): Promise<void> {
  const opts = options();
  let subjects: Subjects;
  try {
    subjects = new Subjects(opts.namespace);
  } catch (error) {
    return fail((error as Error).message);
  }
  if (existsSync(join(opts.out, 'keys')) && !opts.force) {
    fail(`${opts.out} already holds keys; pass --force to replace them (every credential changes).`);
  }
  const deployment = await createDeployment({ subjects, resolverDir: opts.resolverDir });
  for (const [name, text] of Object.entries(files(deployment))) {
    const path = join(opts.out, name);
    mkdirSync(resolve(path, '..'), { recursive: true, mode: 0o700 });
    writeFileSync(path, text, { mode: SECRET_MODE });
  }
  process.stdout.write(
    [
      `NATS operator ${deployment.operator}, account ${deployment.account} (namespace ${opts.namespace}).`,
      `Written to ${opts.out}: auth.conf (include it in the server configuration), creds/<service>.creds`,
      '(TETHER_NATS_CREDS of each service), and history-edge-authority.env (history only).',
      'Keep keys/operator.nk and keys/account.nk offline; no service needs them.',
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => fail((error as Error).message));
