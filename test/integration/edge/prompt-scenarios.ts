// The prompt scenarios every CLI edge suite runs against its real agent (approve then decline,
// answer a question): what differs per agent (the command, how an approval reads, how its effect
// shows) is passed in.
import { existsSync } from 'node:fs';
import { expect } from '@jest/globals';
import type { Approval, EdgeAgentResult } from '#contracts';
import { lastAssistant, WHICH_ONE, type AgentEdgeBus, type AgentSteps } from '../../support/edge.js';

export interface ApprovalScenario {
  /** The two prompts: the first makes a command the user approves, the second one they decline. */
  prompts: readonly [string, string];
  /** The agent's reply after each turn. */
  replies: readonly [string, string];
  /** How the first approval reads for this agent. */
  expectAsked(approval: Approval): void;
  /** That the approved command ran, as this agent reports it. */
  expectRan(done: EdgeAgentResult): Promise<void> | void;
  /** The file the declined command would have made. */
  declinedFile: string;
}

/**
 * A command runs once it is approved (an approval is single use) and not when it is declined;
 * the declined command's activity says so.
 */
export async function expectApprovedThenDeclined(
  bus: AgentEdgeBus,
  steps: Pick<AgentSteps, 'start' | 'send' | 'watch' | 'untilIdle'>,
  scenario: ApprovalScenario,
): Promise<void> {
  const { send, watch, untilIdle } = steps;
  const id = (await steps.start()).session_id!;
  const waitingApproval = (what: string) =>
    watch(id, (snapshot) => (snapshot.approvals ?? []).length > 0, what);

  await send(id, scenario.prompts[0]);
  const approval = (await waitingApproval('an approval')).approvals![0]!;
  scenario.expectAsked(approval);
  expect(approval.id).toMatch(/^[0-9a-f]{32}$/);
  const accept = { action: 'approve', ...bus.on(id), approval_id: approval.id, decision: 'accept' } as const;
  const accepted = await bus.rpc(accept);
  expect(accepted.status).toBe('ok');
  expect(accepted.approvals ?? []).toEqual([]);
  // Single use: the same approval cannot be answered twice.
  expect((await bus.rpc(accept)).status).toBe('invalid_request');
  const first = await untilIdle(id);
  expect(lastAssistant(first)).toBe(scenario.replies[0]);
  await scenario.expectRan(first);

  await send(id, scenario.prompts[1]);
  const again = (await waitingApproval('a second approval')).approvals![0]!;
  const refused = await bus.rpc({
    action: 'approve',
    ...bus.on(id),
    approval_id: again.id,
    decision: 'decline',
  });
  expect(refused.status).toBe('ok');
  const second = await untilIdle(id);
  expect(lastAssistant(second)).toBe(scenario.replies[1]);
  expect(existsSync(scenario.declinedFile)).toBe(false);
  const commands = second.activities?.filter((activity) => activity.kind === 'commandExecution');
  expect(commands?.at(-1)?.status).toBe('declined');
}

/** The question both agents' scripted providers ask (`WHICH_ONE`). */
export interface QuestionScenario {
  /** The id the edge gives the question (the agent's own, or `q1`, … when it has none). */
  questionId: string;
  /** The question as the client sees it exactly (true), or with more fields besides (false). */
  exact: boolean;
  /** Also answer outside the options first, which must be refused and change nothing. */
  refusesOtherAnswers: boolean;
}

/**
 * The agent asks "Which one?" (header `Pick`, options Left/Right) and, answered `Right`, replies
 * "Right it is."; the answer shows as a completed user-input activity.
 */
export async function expectQuestionAnswered(
  bus: AgentEdgeBus,
  steps: Pick<AgentSteps, 'start' | 'send' | 'watch' | 'untilIdle'>,
  scenario: QuestionScenario,
): Promise<void> {
  const id = (await steps.start()).session_id!;
  await steps.send(id, 'ask me');
  const asking = await steps.watch(id, (s) => (s.input_requests ?? []).length > 0, 'an input request');
  const input = asking.input_requests![0]!;
  const question = { id: scenario.questionId, ...WHICH_ONE };
  expect(input.questions).toEqual([scenario.exact ? question : expect.objectContaining(question)]);
  const answer = (choice: string) =>
    bus.rpc({
      action: 'answer',
      ...bus.on(id),
      input_id: input.id,
      answers: [{ question_id: scenario.questionId, answers: [choice] }],
    });
  // An answer outside the options changes nothing.
  if (scenario.refusesOtherAnswers) expect((await answer('Middle')).status).toBe('invalid_request');
  expect((await answer('Right')).status).toBe('ok');
  const done = await steps.untilIdle(id);
  expect(lastAssistant(done)).toBe('Right it is.');
  expect(done.activities?.find((activity) => activity.kind === 'userInput')).toMatchObject({
    status: 'completed',
    output: 'Which one? → Right',
  });
}

/**
 * A new session's first turn streams `reply`: the turn ends with the prompt and the reply, and the
 * router saw the reply grow over several revisions before it was whole.
 */
export async function expectStreamedReply(
  bus: AgentEdgeBus,
  steps: Pick<AgentSteps, 'send' | 'untilIdle'>,
  id: string,
  reply: string,
): Promise<void> {
  const sent = await steps.send(id, 'hello');
  const done = await steps.untilIdle(id);
  expect(done.status).toBe('ok');
  expect(done.messages).toEqual([
    { role: 'user', text: 'hello' },
    { role: 'assistant', text: reply },
  ]);
  const partial = bus.updates.filter((update) => {
    const text = update.session_id === id ? lastAssistant(update.snapshot) : '';
    return text.length > 0 && text.length < reply.length && reply.startsWith(text);
  });
  expect(partial.length).toBeGreaterThan(0);
  expect(done.revision!).toBeGreaterThan(sent.revision! + 2);
}

/**
 * Choosing a model: refused before the client has read the list and for a model not on it; a
 * listed `model` is then chosen and the next turn (scripted to reply "second") runs. Returns the
 * `models` answer for the suite's own checks of the list.
 */
export async function expectModelChosen(
  bus: AgentEdgeBus,
  steps: Pick<AgentSteps, 'send' | 'untilIdle'>,
  id: string,
  model: string,
): Promise<EdgeAgentResult> {
  const choose = (name: string) => bus.rpc({ action: 'model', ...bus.on(id), model: name });
  expect((await choose(model)).status).toBe('invalid_request');
  const models = await bus.rpc({ action: 'models', ...bus.on(id) });
  expect(models).toMatchObject({ status: 'ok', models_available: true });
  expect((await choose('gpt-invented')).status).toBe('invalid_request');
  expect(await choose(model)).toMatchObject({ status: 'ok', model });
  await steps.send(id, 'with the chosen model');
  expect(lastAssistant(await steps.untilIdle(id))).toBe('second');
  return models;
}

/**
 * A turn interrupted once its reply began (the provider hangs it) ends without closing the
 * session; with `nextReply`, the next turn (the provider scripted to answer it) still runs.
 */
export async function expectInterrupted(
  bus: AgentEdgeBus,
  steps: Pick<AgentSteps, 'start' | 'send' | 'watch' | 'untilIdle'>,
  nextReply?: string,
): Promise<void> {
  const { session_id: id } = await steps.start();
  await steps.send(id!, 'take your time');
  await steps.watch(id!, (s) => lastAssistant(s).length > 0, 'the first reply');
  expect((await bus.rpc({ action: 'interrupt', ...bus.on(id!) })).status).toBe('ok');
  const done = await steps.untilIdle(id!);
  expect(done.status).toBe('ok');
  expect(done.closed).toBeFalsy();
  if (nextReply === undefined) return;
  await steps.send(id!, 'again');
  expect(lastAssistant(await steps.untilIdle(id!))).toBe(nextReply);
}

/** The scenarios above bound to one suite's bus and steps. */
export function promptScenarios(
  bus: AgentEdgeBus,
  steps: Pick<AgentSteps, 'start' | 'send' | 'watch' | 'untilIdle'>,
) {
  return {
    expectApprovedThenDeclined: (scenario: ApprovalScenario) =>
      expectApprovedThenDeclined(bus, steps, scenario),
    expectQuestionAnswered: (scenario: QuestionScenario) => expectQuestionAnswered(bus, steps, scenario),
    expectStreamedReply: (id: string, reply: string) => expectStreamedReply(bus, steps, id, reply),
    expectModelChosen: (id: string, model: string) => expectModelChosen(bus, steps, id, model),
    expectInterrupted: (nextReply?: string) => expectInterrupted(bus, steps, nextReply),
  };
}
