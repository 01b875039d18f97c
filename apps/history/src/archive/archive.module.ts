import { Module } from '@nestjs/common';
import { ArchiveHandler } from './archive.handler.js';
import { ArchiveRepository } from './archive.repository.js';
import { ArchiveService } from './archive.service.js';

/** Stored sessions: resume seeds, offline views, archived windows, rename, delete, transcript. */
@Module({
  controllers: [ArchiveHandler],
  providers: [ArchiveRepository, ArchiveService],
})
export class ArchiveModule {}
