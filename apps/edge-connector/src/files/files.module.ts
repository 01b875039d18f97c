import { Module } from '@nestjs/common';
import type { EdgeConfig } from '../config.js';
import { EDGE_CONFIG } from '../common/tokens.js';
import { FILES_OPTIONS, FilesService, type FilesOptions } from './files.service.js';

@Module({
  providers: [
    {
      provide: FILES_OPTIONS,
      inject: [EDGE_CONFIG],
      useFactory: (config: EdgeConfig): FilesOptions => ({
        homeDir: config.homeDir,
        dataDir: config.dataDir,
      }),
    },
    FilesService,
  ],
  exports: [FilesService],
})
export class FilesModule {}
