import { Module } from '@nestjs/common';
import { SessionUpdatesService } from './session-updates.service.js';

@Module({ providers: [SessionUpdatesService], exports: [SessionUpdatesService] })
export class UpdatesModule {}
