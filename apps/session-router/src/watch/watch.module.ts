import { Module } from '@nestjs/common';
import { WatchRepository } from './watch.repository.js';
import { WatchService } from './watch.service.js';

@Module({
  providers: [WatchRepository, WatchService],
  exports: [WatchService],
})
export class WatchModule {}
