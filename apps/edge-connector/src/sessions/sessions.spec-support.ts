// Shared set-up of the SessionsService specs (scratch home, scripted driver harness), not a spec itself.
import { Logger } from '@nestjs/common';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toWire, type EdgeAgentRequest, type EdgeAgentResult, type EdgeAgentRPCRequest } from '#contracts';
import type { AgentDriver, AgentEvent, OpenSessionOptions } from '../agent/agent-driver.js';
import {
  DEFAULT_SCRIPT,
  SCRIPTED_INSTALLATION,
  ScriptedDriver,
  parseScript,
} from '../agent/scripted/index.js';
import type { SessionClock } from './turn-state.js';
import { SessionsService, type SessionChange, type SessionChangeSink } from './sessions.service.js';

export const ACCESS = 'a'.repeat(32);
export const OTHER_ACCESS = 'b'.repeat(32);
export const OWNER = '1';

/** Keeps the last event callback so a test can inject native events (foreign turns, floods). */
export class TapDriver implements AgentDriver {
  readonly kind: string;
  emit: (event: AgentEvent) => void = () => undefined;
  constructor(private readonly inner: AgentDriver) {
    this.kind = inner.kind;
  }
  discover() {
    return this.inner.discover();
  }
  open(options: OpenSessionOptions) {
    this.emit = options.onEvent;
    return this.inner.open(options);
  }
}

class RecordingSink implements SessionChangeSink {
  readonly changes: SessionChange[] = [];
  changed(_sessionId: string, build: () => SessionChange): void {
    this.changes.push(build());
  }
}

/** The project and home folder of every harness: a scratch folder per spec file. */
export let home: string;
/** Call at the top of a spec file: makes `home` for its tests and removes it after them. */
export function useScratchHome(): void {
  beforeAll(() => {
    Logger.overrideLogger(false);
    home = realpathSync(mkdtempSync(join(tmpdir(), 'edge-sessions-')));
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));
}

type Call = Harness['call'];

/** Starts a session of the scripted installation in `home` and returns its id. */
export async function startScripted(
  call: (request: Parameters<Call>[0]) => ReturnType<Call>,
  access?: string,
): Promise<string> {
  const started = await call({
    action: 'start',
    installation_id: SCRIPTED_INSTALLATION.id,
    project: home,
    access_id: access,
  });
  expect(started.status).toBe('ok');
  return started.session_id as string;
}

/** Polls every 5 ms (400 times at most) until `predicate` holds, and returns that snapshot. */
export async function pollUntil(
  poll: () => Promise<EdgeAgentResult>,
  predicate: (snapshot: EdgeAgentResult) => boolean,
): Promise<EdgeAgentResult> {
  for (let i = 0; i < 400; i += 1) {
    const snapshot = await poll();
    if (predicate(snapshot)) return snapshot;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('condition not reached');
}

export interface Harness {
  sessions: SessionsService;
  driver: TapDriver;
  sink: RecordingSink;
  call(
    request: Partial<EdgeAgentRequest> & { action: EdgeAgentRequest['action'] },
    extra?: Partial<EdgeAgentRPCRequest>,
  ): Promise<EdgeAgentResult>;
  start(access?: string): Promise<string>;
  waitFor(
    sessionId: string,
    predicate: (snapshot: EdgeAgentResult) => boolean,
    access?: string,
  ): Promise<EdgeAgentResult>;
}

export function harness(rawScript?: unknown, clock?: SessionClock): Harness {
  const script = rawScript ? parseScript(rawScript, 'test') : DEFAULT_SCRIPT;
  const driver = new TapDriver(new ScriptedDriver(script));
  const sink = new RecordingSink();
  const sessions = new SessionsService(driver, { homeDir: home, unsupportedUser: false, clock }, sink);
  const call: Harness['call'] = (request, extra = {}) =>
    sessions.handle(
      { version: 1, actor_id: OWNER, ...extra, request: { edge_id: '1', ...request } },
      new AbortController().signal,
    );
  const start = (access?: string): Promise<string> => startScripted(call, access);
  const waitFor: Harness['waitFor'] = (sessionId, predicate, access = ACCESS) =>
    pollUntil(
      () => call({ action: 'poll', session_id: sessionId, access_id: access || undefined }),
      predicate,
    );
  return { sessions, driver, sink, call, start, waitFor };
}

export const idle = (snapshot: EdgeAgentResult): boolean => !snapshot.running;
export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(toWire(value)));
