// Everything a new deployment's NATS needs: operator, system and Tether accounts, their signing
// keys, one user per service, the system user history pushes revocations with, and the server's
// resolver configuration. `npm run nats:setup` writes it to disk; the operator-mode tests build
// it in memory the same way.
import { createAccount, createOperator, createUser } from '@nats-io/nkeys';
import { SERVICE_IDENTITIES, servicePermissions, type ServiceIdentity, type Subjects } from '#contracts';
import {
  credsFile,
  operatorJwt,
  seedOf,
  SYSTEM_PUSH_CLAIMS,
  systemAccountJwt,
  tetherAccountJwt,
  userJwt,
} from './claims.js';
import { resolverConfig } from './server-config.js';

export interface NatsDeployment {
  /** Public keys. */
  operator: string;
  systemAccount: string;
  account: string;
  /** Seeds. The operator and account identity seeds belong offline, with whoever runs setup. */
  seeds: {
    operator: string;
    operatorSigning: string;
    account: string;
    accountSigning: string;
    systemAccount: string;
  };
  operatorJwt: string;
  systemAccountJwt: string;
  accountJwt: string;
  /** `.creds` text per service identity. */
  creds: Record<ServiceIdentity, string>;
  /** `.creds` text of the system user that pushes account JWTs (history only). */
  systemCreds: string;
  /** The authorization block of the server configuration (deploy/nats `auth.conf`). */
  serverAuthConfig: string;
}

export interface DeploymentOptions {
  subjects: Subjects;
  /** Where the servers keep account JWTs (the full resolver's directory). */
  resolverDir: string;
}

export async function createDeployment(options: DeploymentOptions): Promise<NatsDeployment> {
  const operator = createOperator();
  const operatorSigning = createOperator();
  const system = createAccount();
  const account = createAccount();
  const accountSigning = createAccount();
  const systemJwt = await systemAccountJwt(system.getPublicKey(), operatorSigning);
  const accountJwt = await tetherAccountJwt({
    account: account.getPublicKey(),
    signer: operatorSigning,
    signingKeys: [accountSigning.getPublicKey()],
  });
  const creds = {} as Record<ServiceIdentity, string>;
  for (const identity of SERVICE_IDENTITIES) {
    const user = createUser();
    const jwt = await userJwt({
      name: identity,
      user: user.getPublicKey(),
      account: account.getPublicKey(),
      signer: accountSigning,
      permissions: servicePermissions(options.subjects, identity),
    });
    creds[identity] = credsFile(jwt, user);
  }
  const systemUser = createUser();
  const systemUserJwt = await userJwt({
    name: 'history-resolver-push',
    user: systemUser.getPublicKey(),
    account: system.getPublicKey(),
    signer: system,
    claims: SYSTEM_PUSH_CLAIMS,
  });
  const opJwt = await operatorJwt(operator, operatorSigning.getPublicKey(), system.getPublicKey());
  return {
    operator: operator.getPublicKey(),
    systemAccount: system.getPublicKey(),
    account: account.getPublicKey(),
    seeds: {
      operator: seedOf(operator),
      operatorSigning: seedOf(operatorSigning),
      account: seedOf(account),
      accountSigning: seedOf(accountSigning),
      systemAccount: seedOf(system),
    },
    operatorJwt: opJwt,
    systemAccountJwt: systemJwt,
    accountJwt,
    creds,
    systemCreds: credsFile(systemUserJwt, systemUser),
    serverAuthConfig: resolverConfig({
      operatorJwt: opJwt,
      systemAccount: system.getPublicKey(),
      systemAccountJwt: systemJwt,
      tetherAccount: account.getPublicKey(),
      tetherAccountJwt: accountJwt,
      resolverDir: options.resolverDir,
    }),
  };
}
