// `npm run nats:setup`: creates the NATS operator, accounts, signing keys and one user per
// service for a new deployment and writes them, with the server's authorization block, into one
// folder (docs/security.md "Setting up a deployment"):
//
//   npm run nats:setup -- [--out deploy/nats/secrets] [--namespace tether]
//                         [--resolver-dir /data/jwt] [--force]
//
// It refuses to touch a folder that already holds keys unless --force is given: new keys mean
// every service and every enrolled edge needs new credentials.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_NAMESPACE, Subjects } from '#contracts';
import { createDeployment } from '#nats-auth';
import { holdsKeys, writeDeployment } from './write.js';

const DEFAULT_OUT = 'deploy/nats/secrets';
/** The full resolver's folder inside the nats container (deploy/nats, docker-compose volume). */
const DEFAULT_RESOLVER_DIR = '/data/jwt';

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

async function main(): Promise<void> {
  const opts = options();
  let subjects: Subjects;
  try {
    subjects = new Subjects(opts.namespace);
  } catch (error) {
    return fail((error as Error).message);
  }
  if (holdsKeys(opts.out) && !opts.force) {
    fail(`${opts.out} already holds keys; pass --force to replace them (every credential changes).`);
  }
  const deployment = await createDeployment({ subjects, resolverDir: opts.resolverDir });
  writeDeployment(opts.out, deployment);
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
