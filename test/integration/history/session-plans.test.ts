// Query plans of the two hot reads of session_histories, on a database built by the migrations:
// history's row lock before each journal batch must find a session by its primary key however
// many sessions its access holds, and a sessions-list page must read the list index in order.
// Before the list index was led by the access alone, the planner took it for the lock lookup
// once an access's rows had been updated a few times (no statistics yet, as on a fresh or a
// fast-growing table), and stepped over every row of the access for each key.
import { jest } from '@jest/globals';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '#test-support';

jest.setTimeout(60_000);

const ACCESS = 'a'.repeat(32);
const SESSIONS = 1_536;
const UPDATES_PER_SESSION = 20;

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

let database: TestDatabase;
let db: pg.Client;

beforeAll(async () => {
  database = await createTestDatabase('session-plans');
  db = new pg.Client({ connectionString: database.url });
  await db.connect();
  await db.query(
    `INSERT INTO session_histories (owner_id, access_id, edge_id, session_id, revision, epoch)
     SELECT 'owner', $1, 5, md5(g::text), 1, 'e' FROM generate_series(1, $2::int) g`,
    [ACCESS, SESSIONS],
  );
  // Each update moves updated_at (an indexed column), as every stored journal batch does; in
  // one transaction, so that no dead row version is pruned before the plans are read.
  await db.query('BEGIN');
  for (let update = 1; update <= UPDATES_PER_SESSION; update++) {
    await db.query(
      `UPDATE session_histories SET revision = revision + 1, synced_at = now(),
         updated_at = now() + make_interval(secs => $1)`,
      [update],
    );
  }
  await db.query('COMMIT');
});

afterAll(async () => {
  await db?.end();
  await database?.drop();
});

async function plan(sql: string, params: unknown[]): Promise<PlanNode> {
  const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
    `EXPLAIN (FORMAT JSON) ${sql}`,
    params,
  );
  return rows[0]!['QUERY PLAN'][0].Plan;
}

function nodes(root: PlanNode): PlanNode[] {
  return [root, ...(root.Plans ?? []).flatMap(nodes)];
}

function indexesOf(root: PlanNode): string[] {
  return nodes(root).flatMap((node) => (node['Index Name'] ? [node['Index Name']] : []));
}

test('locks a session row through the primary key, before and after statistics exist', async () => {
  const lookup = `SELECT deleted, revision FROM session_histories
    WHERE owner_id = 'owner' AND access_id = $1::char(32) AND edge_id = 5 AND session_id = md5('5')
    FOR UPDATE`;
  expect(indexesOf(await plan(lookup, [ACCESS]))).toEqual(['session_histories_pkey']);
  await db.query('ANALYZE session_histories');
  expect(indexesOf(await plan(lookup, [ACCESS]))).toEqual(['session_histories_pkey']);
});

test('reads a sessions-list page from the list index in order, without sorting the access', async () => {
  await db.query('ANALYZE session_histories');
  const page = await plan(
    `SELECT session_id, updated_at FROM session_histories
     WHERE owner_id = 'owner' AND access_id = $1::char(32) AND edge_id = 5 AND deleted = false
     ORDER BY updated_at DESC, session_id DESC LIMIT 50 OFFSET 0`,
    [ACCESS],
  );
  expect(indexesOf(page)).toEqual(['session_histories_list_idx']);
  expect(nodes(page).map((node) => node['Node Type'])).not.toContain('Sort');
});
