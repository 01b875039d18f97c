// The set-up every e2e suite shares: its own database and namespace, a project and an edge data
// folder, the real services started through the stack launcher, and a client for the demo owner.
// Kept out of `#test-support`'s index so integration suites do not load the launcher.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect } from '@jest/globals';
import { Subjects } from '#contracts';
import { Stack, type NatsIdentities, type StackOptions } from '../../scripts/stack/launcher.js';
import {
  createTestDatabase,
  testServices,
  uniqueNamespace,
  type TestDatabase,
  type TestServices,
} from './environment.js';
import { ApiClient, freePort, signToken } from './http.js';
import { sleep } from './polling.js';
import { startOperatorNats, type OperatorNats } from './nats-operator.js';
import { TEST_EDGE_SECRET, TEST_JWT_SECRET } from './secrets.js';

/** Set by a suite that runs the e2e flow against a nats-server in operator mode on this port. */
let operatorNatsPort: number | undefined;

/**
 * Every stack this suite starts runs on its own nats-server in operator mode (the shipped
 * configuration), each service with its own credentials and the demo edge with the NATS user
 * its enrollment minted.
 */
export function useOperatorNats(port: number): void {
  operatorNatsPort = port;
}

/** Operator-mode identities of the services, and history's edge authority variables. */
function identities(nats: OperatorNats): NatsIdentities {
  const { deployment } = nats;
  return {
    api: nats.credsPath('api'),
    router: nats.credsPath('session-router'),
    history: nats.credsPath('history'),
    edgeAuthority: {
      TETHER_NATS_ACCOUNT: deployment.account,
      TETHER_NATS_ACCOUNT_SIGNING_KEY: deployment.seeds.accountSigning,
      TETHER_NATS_OPERATOR_SIGNING_KEY: deployment.seeds.operatorSigning,
      TETHER_NATS_SYSTEM_CREDS: nats.credsPath('system'),
    },
  };
}

export interface E2eStackOptions {
  /** Names the database, namespace and folders of the suite. */
  label: string;
  /** Default: TEST_JWT_SECRET. */
  jwtSecret?: string;
  /** Default: TEST_EDGE_SECRET. */
  edgeSecret?: string;
  owner: string;
  /** The scripted agent's script (rules, delays), written into the edge's data folder. */
  script?: object;
  /** Writes what the edge needs into its data folder before it starts; returns its extra env. */
  prepareEdge?: (edgeDir: string) => Record<string, string>;
  /** NATS, Redis and Postgres of the suite's own (a fault suite kills them); default: the shared ones. */
  services?: TestServices;
  /** Anything else for the launcher (agent, history key, extra env, ...). */
  stack?: Partial<StackOptions>;
}

export interface E2eStack {
  stack: Stack;
  database: TestDatabase;
  projectDir: string;
  edgeDir: string;
  /** Signed in as the demo owner with every permission. */
  owner: ApiClient;
  close(): Promise<void>;
}

export async function startE2eStack(options: E2eStackOptions): Promise<E2eStack> {
  const jwtSecret = options.jwtSecret ?? TEST_JWT_SECRET;
  const services = options.services ?? (await testServices());
  const database = await createTestDatabase(options.label, services.databaseUrl);
  const projectDir = mkdtempSync(join(tmpdir(), `tether-${options.label}-project-`));
  const edgeDir = mkdtempSync(join(tmpdir(), `tether-${options.label}-edge-`));
  let stack: Stack | undefined;
  let operatorNats: OperatorNats | undefined;
  const close = async () => {
    await stack?.down();
    await operatorNats?.stop();
    await database.drop();
    rmSync(projectDir, { recursive: true, force: true });
    rmSync(edgeDir, { recursive: true, force: true });
  };
  try {
    const namespace = uniqueNamespace(options.label);
    if (operatorNatsPort !== undefined) {
      operatorNats = await startOperatorNats(new Subjects(namespace), operatorNatsPort);
    }
    stack = new Stack({
      natsUrl: operatorNats?.url ?? services.natsUrl,
      ...(operatorNats && { natsIdentities: identities(operatorNats) }),
      redisUrl: services.redisUrl,
      databaseUrl: database.url,
      namespace,
      httpHost: '127.0.0.1',
      httpPort: await freePort(),
      jwtSecret,
      edgeSecret: options.edgeSecret ?? TEST_EDGE_SECRET,
      demoOwner: options.owner,
      agent: 'scripted',
      edgeDataDir: edgeDir,
      output: 'collect',
      ...options.stack,
      // CI runs as root; the edge refuses root unless told otherwise (tested in the edge suites).
      edgeEnv: {
        TETHER_EDGE_ALLOW_ROOT: '1',
        ...(options.script && { TETHER_SCRIPTED_SCRIPT: writeScript(edgeDir, options.script) }),
        ...options.prepareEdge?.(edgeDir),
        ...options.stack?.edgeEnv,
      },
    });
    await stack.up();
    const owner = new ApiClient(stack.apiUrl, await signToken(jwtSecret, options.owner));
    return { stack, database, projectDir, edgeDir, owner, close };
  } catch (error) {
    await close();
    throw error;
  }
}

function writeScript(edgeDir: string, script: object): string {
  const path = join(edgeDir, 'script.json');
  writeFileSync(path, JSON.stringify(script));
  return path;
}

/** Anything with a log to show: a stack, a server the suite runs. */
interface WithOutput {
  output(): string;
}

function printTail(source: WithOutput | undefined, lines: number): void {
  if (source) console.log(source.output().split('\n').slice(-lines).join('\n'));
}

/** Prints the tail of the services' output after the suite if a test failed; it helps only then. */
export function printOutputOnFailure(source: () => WithOutput | undefined, lines = 150): void {
  let failed = false;
  afterEach(() => {
    const state = expect.getState();
    if (state.currentTestName && state.assertionCalls !== state.numPassingAsserts) failed = true;
  });
  afterAll(() => {
    if (failed) printTail(source(), lines);
  });
}

/** Runs a test's body and prints the tail of the services' output if it fails. */
export async function withOutput(stack: Stack, run: () => Promise<void>, lines = 80): Promise<void> {
  try {
    await run();
  } catch (error) {
    printTail(stack, lines);
    throw error;
  }
}

/** Waits until history holds the session (its start's first journal row is stored); refuses any answer but 404 before. */
export async function untilInHistory(
  client: ApiClient,
  sessionId: string,
  query: string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const probe = await client.call('GET', `/api/v1/sessions/${sessionId}/history?${query}`);
    if (probe.status === 200) return;
    expect(probe.status).toBe(404);
    if (Date.now() > deadline) throw new Error('the session never reached history');
    await sleep(100);
  }
}
