import { Global, Module } from '@nestjs/common';
import { UserLimits } from './user-limits.service.js';

/** Per-user and per-edge limits, shared by the auth guard and the routes that hold resources. */
@Global()
@Module({
  providers: [UserLimits],
  exports: [UserLimits],
})
export class LimitsModule {}
