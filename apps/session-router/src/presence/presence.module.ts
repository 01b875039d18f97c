import { Module } from '@nestjs/common';
import { PresenceHandler } from './presence.handler.js';
import { PresenceRepository } from './presence.repository.js';
import { PresenceService } from './presence.service.js';

@Module({
  controllers: [PresenceHandler],
  providers: [PresenceRepository, PresenceService],
})
export class PresenceModule {}
