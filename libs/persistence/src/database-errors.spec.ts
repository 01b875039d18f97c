import { freePort } from '../../../test/support/http.js';
import { isDatabaseUnavailable } from './database-errors.js';
import { createPrismaClient } from './prisma-client.js';

/** The error Prisma really throws for `query` against a port nothing listens on. */
async function unreachable(query: (client: ReturnType<typeof createPrismaClient>) => Promise<unknown>) {
  const client = createPrismaClient({ databaseUrl: `postgresql://postgres@127.0.0.1:${await freePort()}/x` });
  try {
    await query(client);
  } catch (error) {
    return error;
  } finally {
    await client.$disconnect();
  }
  throw new Error('the query did not fail');
}

describe('isDatabaseUnavailable', () => {
  it('knows an unreachable server, through the ORM, a raw query and a transaction', async () => {
    expect(isDatabaseUnavailable(await unreachable((c) => c.connector.findFirst()))).toBe(true);
    expect(isDatabaseUnavailable(await unreachable((c) => c.$queryRaw`SELECT 1`))).toBe(true);
    expect(
      isDatabaseUnavailable(await unreachable((c) => c.$transaction((tx) => tx.connector.findFirst()))),
    ).toBe(true);
  });

  it('knows a server shutting down or out of connections', () => {
    const adapter = (cause: Record<string, unknown>) =>
      Object.assign(new Error('Raw query failed'), {
        code: 'P2010',
        meta: { driverAdapterError: { cause } },
      });
    expect(isDatabaseUnavailable(adapter({ kind: 'postgres', originalCode: '57P01', code: '57P01' }))).toBe(
      true,
    );
    expect(isDatabaseUnavailable(adapter({ kind: 'postgres', originalCode: '53300', code: '53300' }))).toBe(
      true,
    );
    expect(isDatabaseUnavailable(adapter({ kind: 'postgres', originalCode: '08006', code: '08006' }))).toBe(
      true,
    );
    expect(isDatabaseUnavailable(Object.assign(new Error('pool'), { code: 'P2024' }))).toBe(true);
    const socket = Object.assign(new Error('Connection terminated'), {
      cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
    });
    expect(isDatabaseUnavailable(socket)).toBe(true);
  });

  it('leaves every other failure alone', () => {
    const adapter = (cause: Record<string, unknown>) =>
      Object.assign(new Error('Raw query failed'), {
        code: 'P2010',
        meta: { driverAdapterError: { cause } },
      });
    expect(isDatabaseUnavailable(Object.assign(new Error('unique'), { code: 'P2002' }))).toBe(false);
    expect(isDatabaseUnavailable(adapter({ kind: 'postgres', originalCode: '23505', code: '23505' }))).toBe(
      false,
    );
    expect(isDatabaseUnavailable(adapter({ kind: 'postgres', originalCode: '40001', code: '40001' }))).toBe(
      false,
    );
    expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
    expect(isDatabaseUnavailable('ECONNREFUSED')).toBe(false);
    expect(isDatabaseUnavailable(null)).toBe(false);
  });
});
