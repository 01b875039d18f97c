import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { testServices } from '#test-support';

const run = promisify(execFile);
/** `check` creates, migrates, describes and drops a shadow database: about a second. */
const CHECK_TIMEOUT_MS = 60_000;

describe('prisma migrations', () => {
  it(
    'hold every change of schema.prisma (migrate.mjs check reports no drift)',
    async () => {
      const { databaseUrl } = await testServices();
      // exit code 2 (drift) or 1 (error) rejects with the tool's output.
      const { stdout } = await run(process.execPath, ['scripts/migrate.mjs', 'check'], {
        env: { ...process.env, DATABASE_URL: databaseUrl },
      });
      expect(stdout).toContain('OK: prisma/migrations matches prisma/schema.prisma.');
    },
    CHECK_TIMEOUT_MS,
  );
});
