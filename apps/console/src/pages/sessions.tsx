import type { AgentAccess, SessionSummary } from '../../../../libs/contracts/src/edge-agent.js';
import { agent, expectOk, STATUS_TEXT } from '../api.js';
import { useAccesses, useAction, useLoad } from '../hooks.js';
import { sessionHref } from '../router.js';
import { Pager } from './accesses.js';

/** The reference's sessions page size (reference §2.3 `sessions`). */
const SESSIONS_PAGE_SIZE = 50;

export function SessionsPage({ accessId, pageNo }: { accessId?: string; pageNo: number }) {
  const accesses = useAccesses();
  const access =
    accesses.data?.items.find((a) => a.id === accessId) ?? (accessId ? undefined : accesses.data?.items[0]);
  return (
    <section aria-labelledby="sessions-title">
      <h1 id="sessions-title">Sessions</h1>
      {accesses.error && (
        <p role="alert" class="error">
          {accesses.error}
        </p>
      )}
      <label>
        Saved access
        <select
          value={access?.id ?? ''}
          onChange={(e) => {
            location.hash = `#/sessions/${e.currentTarget.value}`;
          }}
        >
          {!access && <option value="">Choose a saved access</option>}
          {accesses.data?.items.map((a) => (
            <option key={a.id} value={a.id}>
              {a.name}
            </option>
          ))}
        </select>
      </label>
      {accesses.data && accesses.data.items.length === 0 && (
        <p>
          No saved access yet. <a href="#/accesses">Create one</a> to start sessions.
        </p>
      )}
      {access && <SessionList access={access} pageNo={pageNo} />}
    </section>
  );
}

function SessionList({ access, pageNo }: { access: AgentAccess; pageNo: number }) {
  const base = { edge_id: access.edge_id, access_id: access.id };
  const list = useLoad(
    () => agent({ ...base, action: 'sessions', history_page: String(pageNo) }),
    [access.id, pageNo],
  );
  const { error, busy, run } = useAction();
  const pages = Math.max(1, Math.ceil((list.data?.history_total ?? 0) / SESSIONS_PAGE_SIZE));
  const act = (action: () => Promise<unknown>) =>
    run(async () => {
      await action();
      list.reload();
    });
  const start = () =>
    act(async () => {
      const started = expectOk(
        await agent({
          ...base,
          action: 'start',
          installation_id: access.installation_id,
          project: access.project,
        }),
      );
      location.hash = sessionHref(access.edge_id, access.id, started.session_id ?? '');
    });

  const status = list.data?.status;
  return (
    <>
      <button type="button" class="primary" disabled={busy} onClick={() => void start()}>
        New session
      </button>
      {(error ?? list.error) && (
        <p role="alert" class="error">
          {error ?? list.error}
        </p>
      )}
      {status && status !== 'ok' && <p class="warn">{STATUS_TEXT[status] ?? status}</p>}
      <table>
        <caption class="sr-only">Sessions of {access.name}</caption>
        <thead>
          <tr>
            <th scope="col">Title</th>
            <th scope="col">Status</th>
            <th scope="col">Updated</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {list.data?.sessions?.map((s) => (
            <SessionRow key={s.session_id} access={access} session={s} busy={busy} act={act} />
          ))}
          {list.data?.sessions?.length === 0 && (
            <tr>
              <td colSpan={4}>No sessions yet.</td>
            </tr>
          )}
        </tbody>
      </table>
      {pages > 1 && (
        <Pager
          page={pageNo}
          pages={pages}
          onPage={(p) => (location.hash = `#/sessions/${access.id}?page=${p}`)}
        />
      )}
    </>
  );
}

/** One session of the list, with its rename, delete and discard buttons. */
function SessionRow(props: {
  access: AgentAccess;
  session: SessionSummary;
  busy: boolean;
  act: (action: () => Promise<unknown>) => Promise<void>;
}) {
  const { access, session: s, busy, act } = props;
  const base = { edge_id: access.edge_id, access_id: access.id };
  const rename = () => {
    const title = prompt('New title', s.title ?? '')?.trim();
    if (title)
      void act(async () =>
        expectOk(await agent({ ...base, action: 'rename', session_id: s.session_id, title })),
      );
  };
  const remove = (action: 'delete' | 'discard') => {
    const what = action === 'delete' ? 'Delete this session and its history?' : 'Discard this empty session?';
    if (confirm(what))
      void act(async () => expectOk(await agent({ ...base, action, session_id: s.session_id })));
  };
  const name = s.title || 'session';
  return (
    <tr>
      <td>
        <a href={sessionHref(access.edge_id, access.id, s.session_id)}>{s.title || 'New conversation'}</a>
      </td>
      <td>
        {s.running ? 'Running' : s.closed ? 'Closed' : 'Idle'}
        {s.status && s.status !== 'ok' ? ` · ${s.status}` : ''}
      </td>
      <td>{s.updated_at ? new Date(s.updated_at).toLocaleString() : ''}</td>
      <td class="actions">
        <button type="button" disabled={busy} onClick={rename} aria-label={`Rename ${name}`}>
          Rename
        </button>
        <button type="button" disabled={busy} onClick={() => remove('delete')} aria-label={`Delete ${name}`}>
          Delete
        </button>
        <button
          type="button"
          disabled={busy}
          onClick={() => remove('discard')}
          aria-label={`Discard ${name}`}
        >
          Discard
        </button>
      </td>
    </tr>
  );
}
