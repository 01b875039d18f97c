// The flow the e2e suites of real agent CLIs (Claude Code, Codex, Gemini) share: a stack with the
// CLI and its fake provider, a session on the CLI's installation, and one turn in which the agent
// asks to run a command, the owner approves it and the agent replies.
import { realpathSync } from 'node:fs';
import { afterAll, beforeAll, expect } from '@jest/globals';
import type { Approval } from '#contracts';
import { sessionBase, startSession, watchUntil, type ApiClient, type Snapshot } from '#test-support';
import type { Stack, StackOptions } from '../../scripts/stack/launcher.js';
import { printOutputOnFailure, startE2eStack, type E2eStack } from '../support/e2e-stack.js';

export interface CliSession {
  stack: Stack;
  /** Signed in as the suite's owner. */
  client: ApiClient;
  /** The project folder resolved, as the CLIs report paths. */
  projectDir: string;
  /** The fields that name the session in a request. */
  base: Record<string, string>;
}

/**
 * Starts a stack with the CLI `kind` before the suite's tests and closes it after them (the edge's
 * shutdown kills every CLI's process group); prints its output if a test failed. Returns how a
 * test opens a session on the CLI's installation.
 */
export function useCliStack(
  label: string,
  owner: string,
  kind: string,
  stack: Partial<StackOptions>,
): () => Promise<CliSession> {
  let e2e: E2eStack | undefined;
  beforeAll(async () => {
    // The suite may run beside another stack on this machine: no fixed ops (metrics) ports.
    e2e = await startE2eStack({
      label,
      owner,
      stack: { ...stack, extraEnv: { TETHER_METRICS_PORT: 'off' } },
    });
  });
  afterAll(async () => {
    await e2e?.close();
  });
  printOutputOnFailure(() => e2e?.stack);
  return async () => {
    const projectDir = realpathSync(e2e!.projectDir);
    const client = e2e!.owner;
    const started = await startSession(client, e2e!.stack.edge!.id, projectDir, {
      kind,
      name: `e2e ${kind}`,
    });
    return { stack: e2e!.stack, client, projectDir, base: sessionBase(started) };
  };
}

/**
 * Sends `text`, waits for the command approval the fake provider makes the agent ask for, hands
 * it to `checkApproval`, accepts it and returns the snapshot of the finished turn. Each wait is
 * bounded by `waitMs`.
 */
export async function approvedCommandTurn(
  client: ApiClient,
  base: Record<string, unknown>,
  text: string,
  waitMs: number,
  checkApproval: (approval: Approval) => void,
): Promise<Snapshot> {
  const sent = await client.agent<Snapshot>({ ...base, action: 'send', text });
  expect(sent).toMatchObject({ status: 'ok', running: true });
  const asking = await watchUntil(
    client,
    base,
    sent.revision ?? 0,
    (snapshot) => snapshot.status === 'ok' && (snapshot.approvals ?? []).length > 0,
    { timeoutMs: waitMs, what: 'the approval' },
  );
  const approval = asking.approvals![0]!;
  checkApproval(approval);
  const approved = await client.agent<Snapshot>({
    ...base,
    action: 'approve',
    approval_id: approval.id,
    decision: 'accept',
  });
  expect(approved.status).toBe('ok');
  return watchUntil(
    client,
    base,
    approved.revision ?? 0,
    (snapshot) => snapshot.status === 'ok' && !snapshot.running,
    {
      timeoutMs: waitMs,
      what: 'the reply',
    },
  );
}

/** The turn's edge-local timings come in order: dispatch, first reply, finished. */
export function expectOrderedTiming(snapshot: Snapshot): void {
  const timing = snapshot.turn_timing!;
  expect(timing.dispatch_ms!).toBeLessThanOrEqual(timing.first_reply_ms!);
  expect(timing.first_reply_ms!).toBeLessThanOrEqual(timing.finished_ms!);
}

/** Stopping the session closes it. */
export async function expectStopped(client: ApiClient, base: Record<string, unknown>): Promise<void> {
  const stopped = await client.agent<Snapshot>({ ...base, action: 'stop' });
  expect(stopped).toMatchObject({ status: 'session_closed', closed: true });
}
