import { Module } from '@nestjs/common';
import { OpenSubmissionsHandler } from './open-submissions.handler.js';
import { OpenSubmissionsRepository } from './open-submissions.repository.js';

@Module({
  controllers: [OpenSubmissionsHandler],
  providers: [OpenSubmissionsRepository],
})
export class SubmissionsModule {}
