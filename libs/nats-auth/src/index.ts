export {
  TETHER_ACCOUNT_NAME,
  SYSTEM_ACCOUNT_NAME,
  OPERATOR_NAME,
  SYSTEM_PUSH_CLAIMS,
  keyFromSeed,
  seedOf,
  operatorJwt,
  tetherAccountJwt,
  systemAccountJwt,
  userPermissionClaims,
  userJwt,
  credsFile,
} from './claims.js';
export type { AccountJwtInput, UserJwtInput } from './claims.js';
export { CLAIMS_UPDATE_SUBJECT, ClaimsUpdateError, pushAccountJwt } from './resolver.js';
export { resolverConfig } from './server-config.js';
export type { ResolverConfigInput } from './server-config.js';
export { createAccount, createOperator, createUser, type KeyPair } from '@nats-io/nkeys';
export { createDeployment } from './deployment.js';
export type { NatsDeployment, DeploymentOptions } from './deployment.js';
export { mintEdgeUser } from './edge-user.js';
export type { EdgeUser } from './edge-user.js';
