import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/sessions.module.js';
import { HeartbeatService } from './heartbeat.service.js';

@Module({ imports: [SessionsModule], providers: [HeartbeatService], exports: [HeartbeatService] })
export class HeartbeatModule {}
