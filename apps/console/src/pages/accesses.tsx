import { useState } from 'preact/hooks';
import type {
  AgentAccess,
  EdgeAgentResult,
  Installation,
} from '../../../../libs/contracts/src/edge-agent.js';
import { agent, call, expectOk } from '../api.js';
import { useAccesses, useConnectors } from '../hooks.js';

type Draft = Omit<AgentAccess, 'id'> & { id?: string };
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
          {accesses.data?.items.map((access) => (
            <tr key={access.id}>
              <td>
                <a href={`#/sessions/${access.id}`}>{access.name}</a>
              </td>
              <td>{access.kind}</td>
              <td>{connectors.data?.find((c) => c.id === access.edge_id)?.name ?? access.edge_id}</td>
              <td class="mono">{access.project}</td>
              <td class="actions">
                <button
                  type="button"
                  onClick={() => setDraft({ ...access })}
                  aria-label={`Edit ${access.name}`}
                >
                  Edit
                </button>
                <button
                  type="button"
                  onClick={() => void remove(access)}
                  aria-label={`Delete ${access.name}`}
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
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

interface FormProps {
  draft: Draft;
  connectors: { id: string; name: string; online: boolean }[];
  onDone: () => void;
}

function AccessForm({ draft, connectors, onDone }: FormProps) {
  const [value, setValue] = useState<Draft>(draft);
  const [installations, setInstallations] = useState<Installation[]>([]);
  const [browsing, setBrowsing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const set = (patch: Partial<Draft>) => setValue((old) => ({ ...old, ...patch }));

  const discover = async () => {
    setError(null);
    try {
      const result = expectOk(await agent({ edge_id: value.edge_id, action: 'discover' }));
      setInstallations(result.installations ?? []);
      if (!value.project && result.default_project) set({ project: result.default_project });
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const save = async (event: Event) => {
    event.preventDefault();
    setError(null);
    const body = {
      name: value.name.trim(),
      kind: value.kind,
      edge_id: value.edge_id,
      installation_id: value.installation_id,
      project: value.project,
    };
    try {
      if (value.id) await call('PUT', `api/v1/agent-accesses/${value.id}`, body);
      else await call('POST', 'api/v1/agent-accesses', body);
      onDone();
    } catch (e) {
      setError((e as Error).message);
    }
  };

  return (
    <form class="card" onSubmit={(e) => void save(e)} aria-labelledby="access-form-title">
      <h2 id="access-form-title">{value.id ? 'Edit saved access' : 'New saved access'}</h2>
      <label>
        Name
        <input
          value={value.name}
          required
          maxLength={120}
          onInput={(e) => set({ name: e.currentTarget.value })}
        />
      </label>
      <label>
        Edge
        <select
          value={value.edge_id}
          required
          onChange={(e) => {
            set({ edge_id: e.currentTarget.value, installation_id: '' });
            setInstallations([]);
          }}
        >
          <option value="">Choose an edge</option>
          {connectors.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name} {c.online ? '' : '(offline)'}
            </option>
          ))}
        </select>
      </label>
      <div class="row">
        <label>
          Agent installation
          <select
            value={value.installation_id}
            required
            onChange={(e) => {
              const chosen = installations.find((i) => i.id === e.currentTarget.value);
              set({ installation_id: e.currentTarget.value, kind: chosen?.kind ?? value.kind });
            }}
          >
            <option value="">{installations.length ? 'Choose an installation' : 'Discover first'}</option>
            {value.installation_id && !installations.some((i) => i.id === value.installation_id) && (
              <option value={value.installation_id}>
                {value.kind} {value.installation_id}
              </option>
            )}
            {installations.map((i) => (
              <option key={i.id} value={i.id}>
                {i.kind} {i.path ?? i.id}
              </option>
            ))}
          </select>
        </label>
        <button type="button" disabled={!value.edge_id} onClick={() => void discover()}>
          Discover installations
        </button>
      </div>
      <div class="row">
        <label>
          Project folder
          <input
            value={value.project}
            required
            maxLength={4096}
            onInput={(e) => set({ project: e.currentTarget.value })}
          />
        </label>
        <button
          type="button"
          disabled={!value.edge_id}
          onClick={() => setBrowsing(!browsing)}
          aria-expanded={browsing}
        >
          Browse folders
        </button>
      </div>
      {browsing && (
        <DirectoryPicker
          edgeId={value.edge_id}
          start={value.project}
          onPick={(path) => {
            set({ project: path });
            setBrowsing(false);
          }}
        />
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="row">
        <button type="submit" class="primary">
          Save
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function DirectoryPicker({
  edgeId,
  start,
  onPick,
}: {
  edgeId: string;
  start: string;
  onPick: (p: string) => void;
}) {
  const [listing, setListing] = useState<EdgeAgentResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const open = async (directory: string) => {
    setError(null);
    try {
      setListing(
        expectOk(
          await agent({ edge_id: edgeId, action: 'directories', ...(directory ? { directory } : {}) }),
        ),
      );
    } catch (e) {
      setError((e as Error).message);
    }
  };
  if (!listing && !error) void open(start);
  return (
    <div class="picker" role="group" aria-label="Folders on the edge">
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {listing && (
        <>
          <p class="mono">{listing.directory}</p>
          <div class="row">
            <button type="button" onClick={() => onPick(listing.directory ?? '')}>
              Use this folder
            </button>
            {listing.parent_directory && (
              <button type="button" onClick={() => void open(listing.parent_directory!)}>
                Up one folder
              </button>
            )}
          </div>
          <ul>
            {listing.directories?.map((d) => (
              <li key={d.path}>
                <button type="button" class="link" onClick={() => void open(d.path)}>
                  {d.name}/
                </button>
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
