// Edge bridge cases of the reference's §7 list (docs/reference-tests.md) that the sessions.*.spec
// files and resume.spec do not already pin: the reaper's `expire` on the edge, closed-session
// retention, skills, approval de-duplication, native resolution of inputs, activity detail
// bounds, turn timing scope, discard ownership and the model/title management rules.
import {
  Limits,
  toWire,
  type EdgeAgentRequest,
  type EdgeAgentResult,
  type EdgeAgentRPCRequest,
} from '#contracts';
import type { AgentEvent } from '../agent/agent-driver.js';
import { DEFAULT_SCRIPT, ScriptedDriver, parseScript } from '../agent/scripted/index.js';
import type { SessionClock } from './turn-state.js';
import { SessionsService } from './sessions.service.js';
import {
  ACCESS,
  OTHER_ACCESS,
  OWNER,
  TapDriver,
  home,
  pollUntil,
  startScripted,
  useScratchHome,
} from './sessions.spec-support.js';

/** A turn that keeps running until the test stops it, so injected events belong to turn-1. */
const LONG_TURN = { rules: [{ steps: [{ type: 'delay', ms: 30_000 }] }] };

/** The internal actions (`expire`) are not part of the public request type. */
type Action = EdgeAgentRequest['action'] | 'expire';

useScratchHome();

const services: SessionsService[] = [];
afterEach(async () => {
  await Promise.allSettled(services.splice(0).map((service) => service.shutdown()));
});

/** Without a script, the default one (approvals on "approve me", a skill, short replies). */
function harness(script?: unknown, options: { clock?: SessionClock; closedRetentionMs?: number } = {}) {
  const driver = new TapDriver(new ScriptedDriver(script ? parseScript(script, 'test') : DEFAULT_SCRIPT));
  const sessions = new SessionsService(
    driver,
    { homeDir: home, unsupportedUser: false, ...options },
    { changed: () => undefined },
  );
  services.push(sessions);
  const call = (
    request: Partial<Omit<EdgeAgentRequest, 'action'>> & { action: Action },
    extra: Partial<EdgeAgentRPCRequest> = {},
  ): Promise<EdgeAgentResult> =>
    sessions.handle(
      {
        version: 1,
        actor_id: OWNER,
        ...extra,
        request: { edge_id: '1', ...request } as EdgeAgentRequest,
      },
      new AbortController().signal,
    );
  const start = (access?: string): Promise<string> => startScripted(call, access);
  const poll = (id: string, access = ACCESS) =>
    call({ action: 'poll', session_id: id, access_id: access || undefined });
  const waitFor = (id: string, predicate: (s: EdgeAgentResult) => boolean, access = ACCESS) =>
    pollUntil(() => poll(id, access), predicate);
  return { sessions, driver, call, start, poll, waitFor };
}

const idle = (snapshot: EdgeAgentResult): boolean => !snapshot.running;

describe('edge bridge cases of the reference', () => {
  describe('TestLeaseAndOutputBounds / TestManagedSessionExpiration / TestManagedLongTurnSurvivesReaper', () => {
    it('expires an idle saved session with status expired and keeps its snapshot readable', async () => {
      const h = harness();
      const id = await h.start(ACCESS);
      const expired = await h.call({ action: 'expire', session_id: id, access_id: ACCESS });
      expect(expired).toMatchObject({ status: 'expired', closed: true, running: false });
      expect(await h.poll(id)).toMatchObject({ status: 'expired', closed: true });
      expect(h.sessions.liveSessions).toBe(0);
    });

    it('never expires a running turn, approval waits included', async () => {
      const h = harness();
      const id = await h.start(ACCESS);
      await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'approve me' });
      await h.waitFor(id, (s) => (s.approvals ?? []).length === 1);
      expect((await h.call({ action: 'expire', session_id: id, access_id: ACCESS })).status).toBe('busy');
      const still = await h.poll(id);
      expect(still).toMatchObject({ status: 'ok', running: true });
      expect(still.closed).toBeFalsy();
      expect(still.approvals).toHaveLength(1);
    });

    it('forgets a reaped transient session at once', async () => {
      const h = harness();
      const id = await h.start();
      expect((await h.call({ action: 'expire', session_id: id })).status).toBe('expired');
      expect((await h.poll(id, '')).status).toBe('not_found');
    });

    it('answers not_found to an expire of another owner or access and leaves the session open', async () => {
      const h = harness();
      const id = await h.start(ACCESS);
      expect(
        (await h.call({ action: 'expire', session_id: id, access_id: ACCESS }, { actor_id: '2' })).status,
      ).toBe('not_found');
      expect((await h.call({ action: 'expire', session_id: id, access_id: OTHER_ACCESS })).status).toBe(
        'not_found',
      );
      expect((await h.poll(id)).closed).toBeFalsy();
    });
  });

  describe('TestSavedSessionListIsolationAndRetention', () => {
    it('lists a closed saved session until its retention ends, then forgets it', async () => {
      const h = harness(undefined, { closedRetentionMs: 300 });
      const id = await h.start(ACCESS);
      const transient = await h.start();
      await h.call({ action: 'stop', session_id: id, access_id: ACCESS });
      const listed = await h.call({ action: 'sessions', access_id: ACCESS });
      expect(listed.sessions?.map((s) => [s.session_id, s.closed, s.status])).toEqual([
        [id, true, 'session_closed'],
      ]);
      // Not listed for another actor, another access, nor among the transient ones.
      expect(
        (await h.call({ action: 'sessions', access_id: ACCESS }, { actor_id: '2' })).sessions ?? [],
      ).toEqual([]);
      expect((await h.call({ action: 'sessions', access_id: OTHER_ACCESS })).sessions ?? []).toEqual([]);
      expect((await h.call({ action: 'sessions' })).sessions?.map((s) => s.session_id)).toEqual([transient]);
      await h.waitFor(id, (s) => s.status === 'not_found');
      expect((await h.call({ action: 'sessions', access_id: ACCESS })).sessions ?? []).toEqual([]);
    });
  });
});

describe('edge bridge cases of the reference', () => {
  describe('TestEntryBindingAndSessionDetails', () => {
    it('refuses an unknown skill with invalid_request and changes nothing; a known one runs', async () => {
      const h = harness();
      const id = await h.start(ACCESS);
      const before = await h.poll(id);
      expect(before.skills_available).toBe(true);
      const skill = before.skills?.[0];
      expect(skill?.id).toMatch(/^[0-9a-f]{32}$/);
      expect(JSON.stringify(before.skills)).not.toContain('/builtin/');
      const refused = await h.call({
        action: 'send',
        session_id: id,
        access_id: ACCESS,
        text: 'go',
        skill_id: 'c'.repeat(32),
      });
      expect(refused.status).toBe('invalid_request');
      const after = await h.poll(id);
      expect(after.revision).toBe(before.revision);
      expect(after.messages ?? []).toEqual([]);
      const sent = await h.call({
        action: 'send',
        session_id: id,
        access_id: ACCESS,
        text: 'go',
        skill_id: skill?.id,
      });
      expect(sent.status).toBe('ok');
      expect((await h.waitFor(id, idle)).messages?.[0]?.text).toBe('go');
    });
  });

  describe('TestApprovalScopeAndOneShot', () => {
    it('shows a duplicated native approval request once, and refuses a foreign access', async () => {
      const h = harness(LONG_TURN);
      const id = await h.start(ACCESS);
      await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'go' });
      const request: AgentEvent = {
        type: 'approval_request',
        turnId: 'turn-1',
        nativeId: 'native-1',
        kind: 'command',
        command: 'make test',
      };
      h.driver.emit(request);
      h.driver.emit(request);
      const snapshot = await h.poll(id);
      expect(snapshot.approvals).toHaveLength(1);
      const approval = snapshot.approvals?.[0]?.id;
      expect(
        (
          await h.call({
            action: 'approve',
            session_id: id,
            access_id: OTHER_ACCESS,
            approval_id: approval,
            decision: 'accept',
          })
        ).status,
      ).toBe('not_found');
      expect((await h.poll(id)).approvals).toHaveLength(1);
      // Native resolution (another client answered in Codex) removes the card as well.
      h.driver.emit({ type: 'request_resolved', nativeId: 'native-1' });
      expect((await h.poll(id)).approvals ?? []).toEqual([]);
    });
  });
});

describe('edge bridge cases of the reference', () => {
  describe('TestNativeResolutionRemovesInput', () => {
    it('removes a pending input resolved natively and ends its activity; an answer is then refused', async () => {
      const h = harness(LONG_TURN);
      const id = await h.start(ACCESS);
      await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'go' });
      h.driver.emit({
        type: 'input_request',
        turnId: 'turn-1',
        nativeId: 17,
        itemId: 'ask-1',
        questions: [{ id: 'q', question: 'Proceed?', options: [{ label: 'Yes' }] }],
      });
      const asking = await h.poll(id);
      expect(asking.input_requests).toHaveLength(1);
      expect(asking.activities?.[0]).toMatchObject({ kind: 'userInput', status: 'running' });
      h.driver.emit({ type: 'request_resolved', nativeId: 17 });
      const resolved = await h.poll(id);
      expect(resolved.input_requests ?? []).toEqual([]);
      expect(resolved.activities?.[0]).toMatchObject({ kind: 'userInput', status: 'ended' });
      expect(resolved.revision).toBeGreaterThan(asking.revision ?? 0);
      const late = await h.call({
        action: 'answer',
        session_id: id,
        access_id: ACCESS,
        input_id: asking.input_requests?.[0]?.id,
        answers: [{ question_id: 'q', answers: ['Yes'] }],
      });
      expect(late.status).toBe('invalid_request');
    });
  });
});

describe('edge bridge cases of the reference', () => {
  describe('TestActivityDetailsStreamingAndBounds', () => {
    it('keeps 20 × 16 KiB of CJK output within 16 KiB per field and 96 KiB per window, newest whole', async () => {
      const h = harness(LONG_TURN);
      const id = await h.start(ACCESS);
      await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'go' });
      const cjk = '漢字出力'.repeat(1_500); // 18 000 bytes, over the field bound
      for (let i = 0; i < 20; i += 1) {
        h.driver.emit({
          type: 'activity',
          turnId: 'turn-1',
          activity: {
            nativeId: `cmd-${i}`,
            kind: 'commandExecution',
            status: 'completed',
            command: 'build',
            output: cjk,
            exitCode: 0,
            durationMs: 12,
          },
        });
      }
      const snapshot = await h.poll(id);
      const activities = snapshot.activities ?? [];
      expect(activities).toHaveLength(20);
      let total = 0;
      for (const activity of activities) {
        const bytes = Buffer.byteLength(activity.output ?? '');
        expect(bytes).toBeLessThanOrEqual(Limits.ACTIVITY_FIELD_MAX_BYTES);
        expect(activity.output ?? '').not.toMatch(/\uFFFD/);
        total += bytes;
      }
      expect(total).toBeLessThanOrEqual(Limits.ACTIVITY_WINDOW_MAX_BYTES);
      const newest = activities[activities.length - 1];
      expect(Buffer.byteLength(newest?.output ?? '')).toBeGreaterThan(Limits.ACTIVITY_FIELD_MAX_BYTES - 4);
      expect(newest).toMatchObject({ exit_code: 0, duration_ms: 12, truncated: true });
      // Older rows gave up their output for the newest, and say so.
      expect(activities[0]).toMatchObject({ truncated: true });
    });

    it('streams partial output, then the aggregated output replaces it', async () => {
      const h = harness(LONG_TURN);
      const id = await h.start(ACCESS);
      await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'go' });
      const base = { nativeId: 'cmd', kind: 'commandExecution', command: 'ls' };
      h.driver.emit({ type: 'activity', turnId: 'turn-1', activity: { ...base, status: 'running' } });
      h.driver.emit({ type: 'output_delta', turnId: 'turn-1', nativeId: 'cmd', text: 'part' });
      h.driver.emit({ type: 'output_delta', turnId: 'turn-1', nativeId: 'cmd', text: 'ial' });
      expect((await h.poll(id)).activities?.[0]).toMatchObject({ status: 'running', output: 'partial' });
      h.driver.emit({
        type: 'activity',
        turnId: 'turn-1',
        activity: { ...base, status: 'completed', output: 'final', exitCode: 0, durationMs: -5 },
      });
      expect((await h.poll(id)).activities?.[0]).toMatchObject({
        status: 'completed',
        output: 'final',
        exit_code: 0,
        duration_ms: 0,
      });
    });
  });
});

describe('edge bridge cases of the reference', () => {
  describe('TestTurnTimingIsOptionalStableAndScoped', () => {
    it('records each value once per turn, never negative, and a new turn replaces the whole struct', async () => {
      let now = 1_000;
      const clock: SessionClock = { monotonic: () => now, wall: () => Date.now() };
      const h = harness(LONG_TURN, { clock });
      const id = await h.start(ACCESS);
      now = 1_010;
      await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'one' });
      now = 1_030;
      h.driver.emit({ type: 'message_delta', turnId: 'turn-1', itemId: 'm', text: '' });
      h.driver.emit({ type: 'message_delta', turnId: 'turn-1', itemId: 'm', text: 'first' });
      now = 1_050;
      h.driver.emit({ type: 'message_delta', turnId: 'turn-1', itemId: 'm', text: ' more' });
      now = 1_090;
      // The interrupt ends the scripted turn natively (turn_completed), like Codex would.
      await h.call({ action: 'interrupt', session_id: id, access_id: ACCESS });
      await h.waitFor(id, idle);
      now = 1_500;
      h.driver.emit({ type: 'turn_completed', turnId: 'turn-1', status: 'completed' });
      const first = toWire(await h.poll(id));
      expect(first.turn_timing).toEqual({ dispatch_ms: 0, first_reply_ms: 20, finished_ms: 80 });
      // Events of another turn never touch this one's timing.
      h.driver.emit({ type: 'message_delta', turnId: 'turn-9', itemId: 'x', text: 'foreign' });
      expect(toWire(await h.poll(id)).turn_timing).toEqual(first.turn_timing);

      now = 2_000;
      await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'two' });
      const second = toWire(await h.poll(id));
      expect(second.turn_timing).toEqual({ dispatch_ms: 0 });
      // The earlier snapshot was a copy: it still holds the first turn's values.
      expect(first.turn_timing).toEqual({ dispatch_ms: 0, first_reply_ms: 20, finished_ms: 80 });
      // Sessions of another actor never see it.
      expect(
        (await h.call({ action: 'poll', session_id: id, access_id: ACCESS }, { actor_id: '2' })).turn_timing,
      ).toBeUndefined();
    });
  });

  describe('TestDiscardEmptyOwnedSession', () => {
    it('discards only for the owner and access, and never a session with content', async () => {
      const h = harness();
      const id = await h.start(ACCESS);
      expect(
        (await h.call({ action: 'discard', session_id: id, access_id: ACCESS }, { actor_id: '2' })).status,
      ).toBe('not_found');
      expect((await h.call({ action: 'discard', session_id: id, access_id: OTHER_ACCESS })).status).toBe(
        'not_found',
      );
      expect((await h.poll(id)).status).toBe('ok');
      await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'keep me' });
      await h.waitFor(id, idle);
      expect((await h.call({ action: 'discard', session_id: id, access_id: ACCESS })).status).toBe('busy');
      expect((await h.poll(id)).messages?.[0]?.text).toBe('keep me');
    });
  });
});

describe('edge bridge cases of the reference', () => {
  describe('TestSessionManagementOwnershipAndModelSelection', () => {
    it('takes a native title until the user renames; refuses model while running', async () => {
      const h = harness(LONG_TURN);
      const id = await h.start(ACCESS);
      expect((await h.call({ action: 'models', session_id: id, access_id: ACCESS })).status).toBe('ok');
      await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'go' });
      h.driver.emit({ type: 'title', title: 'Native name' });
      expect((await h.poll(id)).title).toBe('Native name');
      expect(
        (await h.call({ action: 'model', session_id: id, access_id: ACCESS, model: 'scripted-fast' })).status,
      ).toBe('busy');
      expect(
        (await h.call({ action: 'rename', session_id: id, access_id: ACCESS, title: 'Mine' })).title,
      ).toBe('Mine');
      h.driver.emit({ type: 'title', title: 'Later native name' });
      expect((await h.poll(id)).title).toBe('Mine');
      expect(
        (await h.call({ action: 'rename', session_id: id, access_id: ACCESS, title: 'x' }, { actor_id: '2' }))
          .status,
      ).toBe('not_found');
    });
  });
});
