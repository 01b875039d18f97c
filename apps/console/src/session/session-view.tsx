// The parts of the session page that only show things: its header (title, stream and agent
// state, round paging) and the rows of the virtualised conversation.
import type { EdgeAgentResult } from '../../../../libs/contracts/src/edge-agent.js';
import { STATUS_TEXT } from '../api.js';
import { EntryView, RoundHeader, type TurnNote } from './entries.js';
import type { StreamState } from './journal.js';
import { MORE_ROUNDS, type Round } from './rounds.js';
import type { Row } from './virtual-list.js';

const STREAM_TEXT: Record<StreamState, string> = {
  connecting: 'Connecting…',
  live: 'Live · caught up',
  reconnecting: 'Reconnecting…',
  ended: 'This session was deleted.',
  'not-found': 'Not found',
};

interface HeaderProps {
  title: string;
  stream: StreamState;
  resumedFrom: string | null;
  snapshot: EdgeAgentResult | null;
  canShowOlder: boolean;
  onShowOlder: () => void;
  onTranscript: () => void;
}

export function SessionHeader(props: HeaderProps) {
  const { snapshot } = props;
  const closed = snapshot?.closed ?? false;
  return (
    <header class="session-head">
      <h1>{props.title}</h1>
      <p class="state-line">
        <span class={`stream ${props.stream}`} role="status" data-resumed-from={props.resumedFrom ?? ''}>
          {STREAM_TEXT[props.stream]}
        </span>
        <span class="agent-state">
          {snapshot?.running ? 'Agent working' : closed ? 'Closed' : 'Idle'}
          {snapshot?.status && snapshot.status !== 'ok'
            ? ` · ${STATUS_TEXT[snapshot.status] ?? snapshot.status}`
            : ''}
        </span>
      </p>
      <div class="row">
        <button type="button" disabled={!props.canShowOlder} onClick={props.onShowOlder}>
          Show {MORE_ROUNDS} older rounds
        </button>
        <button type="button" onClick={props.onTranscript}>
          Download transcript
        </button>
      </div>
    </header>
  );
}

/** One row per round header and per item, in reading order. */
export function conversationRows(
  rounds: Round[],
  liveWindow: number,
  notes: Record<number, TurnNote>,
  traceTemplate: string | null,
): Row[] {
  const rows: Row[] = [];
  for (const round of rounds) {
    rows.push({
      key: `r:${round.window}`,
      render: () => (
        <RoundHeader
          window={round.window}
          live={round.window === liveWindow}
          note={notes[round.window]}
          traceTemplate={traceTemplate}
        />
      ),
    });
    for (const entry of round.entries) {
      rows.push({ key: entry.item.itemId, render: () => <EntryView entry={entry} /> });
    }
  }
  return rows;
}
