import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { ForbiddenError } from '../common/errors.js';
import { UserLimits } from '../limits/user-limits.service.js';
import { AuthService } from './auth.service.js';
import { PRINCIPAL, type AuthenticatedRequest, type Permission } from './principal.js';

const REQUIRED_PERMISSIONS = 'tether:required-permissions';

/**
 * The permissions a route needs, checked in the order given after authentication (reference
 * §2.1: `connectors:update` before `ai.access.use`).
 */
export const RequirePermissions = (...permissions: Permission[]) =>
  SetMetadata(REQUIRED_PERMISSIONS, permissions);

/** Authenticates every guarded route (401), holds the caller to its rate (429), then checks its permissions (403). */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly auth: AuthService,
    private readonly reflector: Reflector,
    private readonly limits: UserLimits,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest & AuthenticatedRequest>();
    const principal = await this.auth.authenticate(request.headers.authorization);
    // Before anything else is spent on the call: a user over its rate costs only this check.
    this.limits.admitRequest(principal.actorId);
    const required = this.reflector.getAllAndOverride<Permission[] | undefined>(REQUIRED_PERMISSIONS, [
      context.getHandler(),
      context.getClass(),
    ]);
    // Known before the permissions are checked, so a refusal for lacking one is still audited
    // under its actor.
    request[PRINCIPAL] = principal;
    for (const permission of required ?? []) {
      if (!principal.permissions.has(permission)) {
        throw new ForbiddenError(`Actor ${principal.actorId} lacks ${permission}.`);
      }
    }
    return true;
  }
}
