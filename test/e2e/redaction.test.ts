// Telemetry redaction on the real chain (docs/security.md "Telemetry redaction"): every action a
// user can take (send plain and with the mutation envelope, approve, answer, rename, file list,
// download and upload) is driven with marker strings in everything the user or the agent writes
// (prompts, agent output, command text, answers, titles, file names, file contents, the project
// path), with every service exporting every span (OTLP http/json to a receiver this suite runs)
// and every line of every service's output collected. No marker may appear in any span (name,
// attribute or event) or any log line; the spans must include Redis and database statements, so
// the check covers what the instrumentation records.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { operationFingerprint, type EdgeAgentRequest, type OperationAction } from '#contracts';
import { type ApiClient, type Snapshot, eventually, sessionBase, startSession } from '#test-support';
import { OtlpReceiver, tracesTo } from '../integration/telemetry/otlp-receiver.js';
import { startE2eStack, type E2eStack } from '../support/e2e-stack.js';

jest.setTimeout(240_000);

/** Every marker holds this: one search finds any of them. */
const MARK = 'ZQXMARK';
const marker = (what: string) => `${MARK}-${what}`;
/** Markers as the user or agent writes them, and the base64 forms file bytes travel in. */
const UPLOAD_CONTENT = marker('upload-content');
const FILE_CONTENT = marker('file-content');
const SETTLE_TIMEOUT_MS = 60_000;

const script = {
  rules: [
    {
      match: { prefix: 'approve' },
      steps: [
        { type: 'reply', text: marker('output-before-command') },
        {
          type: 'command',
          command: `echo ${marker('command')}`,
          output: marker('command-output'),
          approval: true,
          reason: marker('reason'),
        },
        { type: 'reply', text: marker('output-after-command') },
      ],
    },
    {
      match: { prefix: 'ask' },
      steps: [
        {
          type: 'input',
          questions: [{ id: 'q1', question: marker('question'), header: marker('header') }],
        },
        { type: 'reply', text: 'You answered {answer}' },
      ],
    },
    {
      steps: [
        { type: 'title', title: marker('native-title') },
        { type: 'reply', text: marker('output') },
      ],
    },
  ],
};

let e2e: E2eStack | undefined;
let receiver: OtlpReceiver;
const lines: string[] = [];
const owner = `redact${Date.now() % 100000}`;

beforeAll(async () => {
  receiver = new OtlpReceiver();
  const endpoint = await receiver.start();
  e2e = await startE2eStack({
    label: 'e2eredact',
    owner,
    script,
    stack: {
      onOutputLine: (line) => lines.push(line),
      extraEnv: {
        ...tracesTo(endpoint),
        // Debug: the most a service ever logs.
        TETHER_LOG_LEVEL: 'debug',
      },
    },
  });
});

afterAll(async () => {
  await e2e?.close();
  await receiver?.stop();
});

const until = <T>(probe: () => Promise<T | undefined>, what: string) =>
  eventually(probe, what, { timeoutMs: SETTLE_TIMEOUT_MS });

/** Every action, each carrying markers; returns nothing, the telemetry is what is checked. */
async function everyAction(client: ApiClient, projectDir: string): Promise<void> {
  const edgeId = e2e!.stack.edge!.id;
  const started = await startSession(client, edgeId, projectDir, { name: marker('access-name') });
  const { accessId } = started;
  const base = sessionBase(started);
  const idle = () =>
    until(async () => {
      const polled = await client.agent<Snapshot>({ ...base, action: 'poll' });
      return polled.running ? undefined : polled;
    }, 'the turn to finish');
  const waitFor = (check: (snapshot: Snapshot) => boolean, what: string) =>
    until(async () => {
      const polled = await client.agent<Snapshot>({ ...base, action: 'poll' });
      return check(polled) ? polled : undefined;
    }, what);
  const enveloped = (body: EdgeAgentRequest): EdgeAgentRequest => ({
    ...body,
    client_operation_id: `${Date.now()}-${randomBytes(16).toString('hex')}`,
    payload_fingerprint: operationFingerprint(body.action as OperationAction, body),
  });

  // send, plain and enveloped (the router's ledger records the reply in Redis).
  expect(
    (await client.agent<Snapshot>({ ...base, action: 'send', text: marker('prompt-plain') })).status,
  ).toBe('ok');
  await idle();
  const envelopedSend = enveloped({ ...base, action: 'send', text: marker('prompt-enveloped') });
  expect((await client.agent<Snapshot>({ ...envelopedSend })).status).toBe('ok');
  await idle();
  // A replay of it answers from the ledger.
  expect((await client.agent<Snapshot>({ ...envelopedSend })).status).toBe('ok');

  // approve, enveloped.
  await client.agent<Snapshot>({ ...base, action: 'send', text: `approve ${marker('prompt-approve')}` });
  const asking = await waitFor((s) => (s.approvals ?? []).length > 0, 'the approval');
  const approve = enveloped({
    ...base,
    action: 'approve',
    approval_id: asking.approvals![0]!.id,
    decision: 'accept',
  });
  expect((await client.agent<Snapshot>({ ...approve })).status).toBe('ok');
  await idle();

  // answer, enveloped, with a free-text answer.
  await client.agent<Snapshot>({ ...base, action: 'send', text: `ask ${marker('prompt-ask')}` });
  const question = await waitFor((s) => (s.input_requests ?? []).length > 0, 'the input request');
  const request = question.input_requests![0]!;
  const answer = enveloped({
    ...base,
    action: 'answer',
    input_id: request.id,
    answers: [{ question_id: request.questions![0]!.id, answers: [marker('answer')] }],
  });
  expect((await client.agent<Snapshot>({ ...answer })).status).toBe('ok');
  const answered = await idle();
  expect(JSON.stringify(answered.messages)).toContain(marker('answer'));

  // rename.
  expect((await client.agent<Snapshot>({ ...base, action: 'rename', title: marker('title') })).status).toBe(
    'ok',
  );

  // files: list, download, upload.
  writeFileSync(join(projectDir, `${marker('file')}.txt`), FILE_CONTENT);
  const listed = await client.agent<Snapshot>({ ...base, action: 'file_list', file: { path: '' } });
  expect(listed.files?.some((file) => file.name!.includes(MARK))).toBe(true);
  const read = await client.agent<Snapshot>({
    ...base,
    action: 'file_read',
    file: { path: `${marker('file')}.txt` },
  });
  expect(Buffer.from(read.file_data ?? '', 'base64').toString()).toBe(FILE_CONTENT);
  const data = Buffer.from(UPLOAD_CONTENT);
  const begun = await client.agent<Snapshot>({
    ...base,
    action: 'file_begin',
    file: { name: `${marker('upload')}.txt`, size: data.length },
  });
  expect(begun.status).toBe('ok');
  const transfer = begun.transfer_id!;
  const written = await client.agent<Snapshot>({
    ...base,
    action: 'file_write',
    file: { transfer_id: transfer, offset: 0, data: data.toString('base64') },
  });
  expect(written.status).toBe('ok');
  expect(
    (await client.agent<Snapshot>({ ...base, action: 'file_commit', file: { transfer_id: transfer } }))
      .status,
  ).toBe('ok');

  // The transcript as history serves it holds the markers (so they were really carried).
  const page = await client.call<unknown>(
    'GET',
    `/api/v1/sessions/${base.session_id}/history?edge_id=${edgeId}&access_id=${accessId}&limit=200`,
  );
  expect(page.status).toBe(200);
  expect(JSON.stringify(page.body)).toContain(marker('prompt-enveloped'));
}

/** Ten export intervals: every span of the flow has left its service by then. */
const SPANS_FLUSH_WAIT_MS = 2_000;

/** Root span names of the services' background traces (libs/telemetry traceBackground). */
const BACKGROUND_WORK = new Set([
  'edge.heartbeat',
  'router.lease-reaper',
  'router.submission-sweep',
  'history.journal-compaction',
]);

it('keeps every marker of every action out of every exported span and every log line', async () => {
  const stack = e2e!.stack;
  // The project path carries a marker too: paths never reach telemetry either.
  const projectDir = join(e2e!.projectDir, marker('project'));
  mkdirSync(projectDir, { recursive: true });
  try {
    await everyAction(e2e!.owner, projectDir);
  } catch (error) {
    console.log(stack.output().split('\n').slice(-80).join('\n'));
    throw error;
  }
  // Spans leave each service in batches every 200 ms (OTEL_BSP_SCHEDULE_DELAY); background work
  // (heartbeats every second, the reaper, the sweep) never stops making traces of its own, so wait
  // for the flow's last batches rather than for silence.
  await new Promise((resolve) => setTimeout(resolve, SPANS_FLUSH_WAIT_MS));
  expect(receiver.spans.some((span) => !BACKGROUND_WORK.has(span.name))).toBe(true);

  const forms = [
    MARK,
    Buffer.from(UPLOAD_CONTENT).toString('base64'),
    Buffer.from(FILE_CONTENT).toString('base64'),
  ];
  const leaks = (text: string) => forms.some((form) => text.includes(form));
  const leakingSpans = receiver.spans.filter((span) => leaks(JSON.stringify(span)));
  expect(
    leakingSpans.map((span) => `${span.service} ${span.name} ${JSON.stringify(span.attributes)}`),
  ).toEqual([]);
  expect(lines.filter(leaks)).toEqual([]);
  expect(receiver.rejected).toEqual([]);

  // The check covered what the instrumentation records: Redis commands (the ledger's scripts
  // included) and database statements, from every service.
  const services = new Set(receiver.spans.map((span) => span.service));
  expect([...services].sort()).toEqual(
    expect.arrayContaining([
      'tether-api',
      'tether-edge-connector',
      'tether-history',
      'tether-session-router',
    ]),
  );
  const system = (span: (typeof receiver.spans)[number]) =>
    span.attributes['db.system.name'] ?? span.attributes['db.system'];
  const statement = (span: (typeof receiver.spans)[number]) =>
    span.attributes['db.query.text'] ?? span.attributes['db.statement'];
  const redis = receiver.spans.filter((span) => system(span) === 'redis');
  // A Redis span names its command and nothing else: no key, no argument.
  expect(redis.map(statement).filter((text) => !/^[a-z]+$/i.test(String(text)))).toEqual([]);
  expect(redis.some((span) => statement(span) === 'evalsha')).toBe(true);
  // SQL is recorded parameterised: the statements are there, their values are not.
  expect(
    receiver.spans.some((span) => system(span) === 'postgresql' && /\$1/.test(String(statement(span)))),
  ).toBe(true);
  expect(lines.length).toBeGreaterThan(0);
});
