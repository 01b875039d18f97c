// For the Prisma CLI where the native schema engine exists (`npx prisma migrate deploy`).
// Tether's own tooling does not read this file: scripts/migrate.mjs (offline, wasm engine) and
// scripts/prisma-generate.mjs take the schema path and the URL themselves.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: {
    // The URL only matters for commands that connect; `prisma generate` runs without one.
    url: process.env.DATABASE_URL ?? process.env.TETHER_DATABASE_URL ?? '',
  },
});
