import { createParamDecorator, type ExecutionContext } from '@nestjs/common';

export const PERMISSIONS = ['ai.access.use', 'connectors:update', 'files.read', 'files.upload'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** The authenticated caller: the token's `sub` and what it may do. */
export interface Principal {
  actorId: string;
  permissions: ReadonlySet<string>;
  /** Token expiry (ms since epoch): a long watch re-checks it before answering. */
  expiresAt: number;
}

/** Where the guard leaves the principal on the request. */
export const PRINCIPAL = Symbol('PRINCIPAL');
export interface AuthenticatedRequest {
  [PRINCIPAL]?: Principal;
}

/** `@Actor() principal: Principal` in a guarded route. */
export const Actor = createParamDecorator((_data: unknown, context: ExecutionContext): Principal => {
  const principal = context.switchToHttp().getRequest<AuthenticatedRequest>()[PRINCIPAL];
  // The guard runs first on every route that uses this; reaching here without one is a bug.
  if (!principal) throw new Error('Route uses @Actor() without the auth guard.');
  return principal;
});
