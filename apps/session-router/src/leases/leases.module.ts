import { Module } from '@nestjs/common';
import { LeaseReaper } from './lease-reaper.service.js';
import { LeasesRepository } from './leases.repository.js';
import { LeasesService } from './leases.service.js';

@Module({
  providers: [LeasesRepository, LeasesService, LeaseReaper],
  exports: [LeasesService, LeaseReaper],
})
export class LeasesModule {}
