import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { testServices, uniqueNamespace } from '#test-support';

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

  it(
    'keeps the journal rows stored before sequences existed idempotent on their revision',
    async () => {
      const { databaseUrl } = await testServices();
      const name = `tether_${uniqueNamespace('mig').replace(/-/g, '_')}`;
      const admin = new pg.Client({ connectionString: databaseUrl });
      await admin.connect();
      await admin.query(`CREATE DATABASE "${name}"`);
      const url = new URL(databaseUrl);
      url.pathname = `/${name}`;
      const db = new pg.Client({ connectionString: url.toString() });
      try {
        await db.connect();
        const dir = 'prisma/migrations';
        const migrations = readdirSync(dir)
          .filter((entry) => /^\d{14}_/.test(entry))
          .sort();
        const target = migrations.findIndex((entry) => entry.endsWith('_journal_submissions'));
        expect(target).toBeGreaterThan(0);
        const apply = (entry: string) => db.query(readFileSync(join(dir, entry, 'migration.sql'), 'utf8'));
        for (const entry of migrations.slice(0, target)) await apply(entry);
        const row = (revision: number, sequence: number | null) =>
          db.query(
            `INSERT INTO journal (session_id, epoch, revision, owner_id, access_id, edge_id, payload, recorded_at, sequence)
             VALUES ('s1', 'e1', $1, 'o', repeat('a', 32), 1, '\\x00', now(), $2)`,
            [revision, sequence],
          );
        await row(1, null);
        await row(2, 1);
        await apply(migrations[target]!);

        const stored = await db.query(
          'SELECT revision::int, sequence::int, legacy_revision::int FROM journal ORDER BY revision',
        );
        expect(stored.rows).toEqual([
          { revision: 1, sequence: null, legacy_revision: 1 },
          { revision: 2, sequence: 1, legacy_revision: null },
        ]);
        // The same legacy row again is ignored; a submission row at the head's revision is not.
        const again = await db.query(
          `INSERT INTO journal (session_id, epoch, revision, owner_id, access_id, edge_id, payload, recorded_at, legacy_revision)
           VALUES ('s1', 'e1', 1, 'o', repeat('a', 32), 1, '\\x00', now(), 1) ON CONFLICT DO NOTHING`,
        );
        expect(again.rowCount).toBe(0);
        const submission = await db.query(
          `INSERT INTO journal (session_id, epoch, revision, owner_id, access_id, edge_id, recorded_at, sequence, client_message_id)
           VALUES ('s1', 'e1', 2, 'o', repeat('a', 32), 1, now(), 2, 'c1') ON CONFLICT DO NOTHING`,
        );
        expect(submission.rowCount).toBe(1);
      } finally {
        await db.end().catch(() => undefined);
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await admin.end();
      }
    },
    CHECK_TIMEOUT_MS,
  );
});
