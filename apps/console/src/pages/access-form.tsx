// The form of a saved access: name, edge, the agent installation discovered on that edge, and
// the project folder (typed or picked from the edge's folders).
import { useState } from 'preact/hooks';
import type {
  AgentAccess,
  EdgeAgentResult,
  Installation,
} from '../../../../libs/contracts/src/edge-agent.js';
import { agent, call, expectOk } from '../api.js';

export type Draft = Omit<AgentAccess, 'id'> & { id?: string };

interface FormProps {
  draft: Draft;
  connectors: { id: string; name: string; online: boolean }[];
  onDone: () => void;
}

export function AccessForm({ draft, connectors, onDone }: FormProps) {
  const form = useAccessForm(draft, onDone);
  const { value, set, error } = form;
  const [browsing, setBrowsing] = useState(false);
  return (
    <form class="card" onSubmit={(e) => void form.save(e)} aria-labelledby="access-form-title">
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
        <select value={value.edge_id} required onChange={(e) => form.chooseEdge(e.currentTarget.value)}>
          <option value="">Choose an edge</option>
          {connectors.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name} {c.online ? '' : '(offline)'}
            </option>
          ))}
        </select>
      </label>
      <InstallationField
        value={value}
        installations={form.installations}
        set={set}
        onDiscover={form.discover}
      />
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

/** The draft, the installations discovered on its edge, and how it is saved. */
function useAccessForm(draft: Draft, onDone: () => void) {
  const [value, setValue] = useState<Draft>(draft);
  const [installations, setInstallations] = useState<Installation[]>([]);
  const [error, setError] = useState<string | null>(null);
  const set = (patch: Partial<Draft>) => setValue((old) => ({ ...old, ...patch }));
  const chooseEdge = (edgeId: string) => {
    set({ edge_id: edgeId, installation_id: '' });
    setInstallations([]);
  };
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
  return { value, set, installations, error, chooseEdge, discover, save };
}

/** The agent installation: one the edge reported, or the saved one while editing. */
function InstallationField(props: {
  value: Draft;
  installations: Installation[];
  set: (patch: Partial<Draft>) => void;
  onDiscover: () => Promise<void>;
}) {
  const { value, installations, set } = props;
  return (
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
      <button type="button" disabled={!value.edge_id} onClick={() => void props.onDiscover()}>
        Discover installations
      </button>
    </div>
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
