// One valid request per action: the document's examples, checked against the contract's rules.
import { type EdgeAgentAction, type EdgeAgentRequest } from '#contracts';

const SAMPLE = {
  edge: '1001',
  access: '3f2a9c6b8d1e4f7a0b5c2d9e8f1a6b3c',
  installation: '9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e',
  session: '7c1e5a9b2d4f6e8a0c3b5d7f9e1a2c4b',
  approval: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
  input: '0f1e2d3c4b5a69788796a5b4c3d2e1f0',
  transfer: '5d4c3b2a19f8e7d6c5b4a39281706f5e',
};
const inSession = { session_id: SAMPLE.session, access_id: SAMPLE.access };

/** One valid request per action; the integration test runs each through the contract's rules. */
export const ACTION_EXAMPLES: { [A in EdgeAgentAction]: Omit<EdgeAgentRequest, 'edge_id' | 'action'> } = {
  discover: {},
  directories: { directory: '/home/alice' },
  sessions: { access_id: SAMPLE.access, history_page: '1' },
  start: { installation_id: SAMPLE.installation, project: '/home/alice/project', access_id: SAMPLE.access },
  resume: inSession,
  poll: inSession,
  watch: { ...inSession, cursor: '3' },
  send: { ...inSession, text: 'Summarise the README.' },
  interrupt: inSession,
  stop: inSession,
  models: inSession,
  model: { ...inSession, model: 'gpt-5-codex' },
  rename: { ...inSession, title: 'README summary' },
  delete: inSession,
  discard: inSession,
  approve: { ...inSession, approval_id: SAMPLE.approval, decision: 'accept' },
  permissions: { ...inSession, permission_mode: 'workspace-write' },
  answer: { ...inSession, input_id: SAMPLE.input, answers: [{ question_id: 'q1', answers: ['yes'] }] },
  transcript: { ...inSession, history_before: '42' },
  file_list: { ...inSession, file: { path: 'src' } },
  file_begin: { ...inSession, file: { name: 'notes.txt', size: 12 } },
  file_write: { ...inSession, file: { transfer_id: SAMPLE.transfer, offset: 0, data: 'aGVsbG8gd29ybGQh' } },
  file_commit: { ...inSession, file: { transfer_id: SAMPLE.transfer } },
  file_cancel: { ...inSession, file: { transfer_id: SAMPLE.transfer } },
  file_read: { ...inSession, file: { path: 'README.md' } },
};

export function actionExample(action: EdgeAgentAction): EdgeAgentRequest {
  return { edge_id: SAMPLE.edge, action, ...ACTION_EXAMPLES[action] };
}
