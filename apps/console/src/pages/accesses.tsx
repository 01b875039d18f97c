import { useState } from 'preact/hooks';
import type { AgentAccess } from '../../../../libs/contracts/src/edge-agent.js';
import { call } from '../api.js';
import { useAccesses, useConnectors } from '../hooks.js';
import { AccessForm, type Draft } from './access-form.js';

const EMPTY: Draft = { name: '', kind: '', edge_id: '', installation_id: '', project: '' };

export function AccessesPage() {
  const [page, setPage] = useState(1);
  const accesses = useAccesses(page, 20);
  const connectors = useConnectors(false);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [error, setError] = useState<string | null>(null);
  const pages = Math.max(1, Math.ceil((accesses.data?.total ?? 0) / 20));

  const remove = async (access: AgentAccess) => {
    if (!confirm(`Delete the saved access "${access.name}" and the history of its sessions?`)) return;
    try {
      await call('DELETE', `api/v1/agent-accesses/${access.id}`);
      accesses.reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };

  return (
    <section aria-labelledby="accesses-title">
      <h1 id="accesses-title">Saved accesses</h1>
      {(error ?? accesses.error) && (
        <p role="alert" class="error">
          {error ?? accesses.error}
        </p>
      )}
      <AccessTable
        accesses={accesses.data?.items ?? []}
        edgeName={(id) => connectors.data?.find((c) => c.id === id)?.name ?? id}
        onEdit={(access) => setDraft({ ...access })}
        onDelete={(access) => void remove(access)}
      />
      {pages > 1 && <Pager page={page} pages={pages} onPage={setPage} />}
      {!draft && (
        <button type="button" class="primary" onClick={() => setDraft({ ...EMPTY })}>
          New saved access
        </button>
      )}
      {draft && (
        <AccessForm
          draft={draft}
          connectors={connectors.data?.map((c) => ({ id: c.id, name: c.name, online: c.online })) ?? []}
          onDone={() => {
            setDraft(null);
            accesses.reload();
          }}
        />
      )}
    </section>
  );
}

export function Pager({
  page,
  pages,
  onPage,
}: {
  page: number;
  pages: number;
  onPage: (page: number) => void;
}) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous page
      </button>
      <span aria-live="polite">
        Page {page} of {pages}
      </span>
      <button type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next page
      </button>
    </nav>
  );
}

/** The saved accesses of this page, each with its edit and delete buttons. */
function AccessTable(props: {
  accesses: AgentAccess[];
  edgeName: (id: string) => string;
  onEdit: (access: AgentAccess) => void;
  onDelete: (access: AgentAccess) => void;
}) {
  return (
    <table>
      <caption class="sr-only">Saved accesses</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Agent</th>
          <th scope="col">Edge</th>
          <th scope="col">Project</th>
          <th scope="col">Actions</th>
        </tr>
      </thead>
      <tbody>
        {props.accesses.map((access) => (
          <tr key={access.id}>
            <td>
              <a href={`#/sessions/${access.id}`}>{access.name}</a>
            </td>
            <td>{access.kind}</td>
            <td>{props.edgeName(access.edge_id)}</td>
            <td class="mono">{access.project}</td>
            <td class="actions">
              <button type="button" onClick={() => props.onEdit(access)} aria-label={`Edit ${access.name}`}>
                Edit
              </button>
              <button
                type="button"
                onClick={() => props.onDelete(access)}
                aria-label={`Delete ${access.name}`}
              >
                Delete
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
