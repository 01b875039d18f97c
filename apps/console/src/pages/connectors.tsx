import { useState } from 'preact/hooks';
import { call } from '../api.js';
import { useAction, useConnectors } from '../hooks.js';
import type { AgentConnector } from '../../../../libs/contracts/src/edge-agent.js';

interface Enrollment {
  connector: { id: string; name: string };
  env: { TETHER_EDGE_ID: string; TETHER_EDGE_TOKEN: string; TETHER_NAMESPACE: string };
}

export function ConnectorsPage() {
  const connectors = useConnectors();
  const [name, setName] = useState('');
  const [device, setDevice] = useState('');
  const [enrolled, setEnrolled] = useState<Enrollment | null>(null);
  const { error, busy, run } = useAction();

  const enroll = (event: Event) => {
    event.preventDefault();
    return run(async () => {
      const body = { name: name.trim(), ...(device.trim() ? { device: device.trim() } : {}) };
      setEnrolled(await call<Enrollment>('POST', 'api/v1/edge-agents/connectors', body));
      setName('');
      setDevice('');
      connectors.reload();
    });
  };

  return (
    <section aria-labelledby="connectors-title">
      <h1 id="connectors-title">Connectors</h1>
      {connectors.error && (
        <p role="alert" class="error">
          {connectors.error}
        </p>
      )}
      <ConnectorTable connectors={connectors.data} />

      <form class="card" onSubmit={(e) => void enroll(e)}>
        <h2>Enroll a new edge</h2>
        <label>
          Name
          <input value={name} required maxLength={120} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Device (optional)
          <input value={device} maxLength={120} onInput={(e) => setDevice(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy}>
          Enroll
        </button>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>

      {enrolled && <EnrolledCard enrolled={enrolled} onDone={() => setEnrolled(null)} />}
    </section>
  );
}

/** The caller's connectors and whether each is online. */
function ConnectorTable({ connectors }: { connectors: AgentConnector[] | undefined }) {
  return (
    <table>
      <caption class="sr-only">Your connectors and whether they are online</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Device</th>
          <th scope="col">State</th>
          <th scope="col">Id</th>
        </tr>
      </thead>
      <tbody>
        {connectors?.map((connector) => (
          <tr key={connector.id}>
            <td>{connector.name}</td>
            <td>{connector.device ?? ''}</td>
            <td>
              <span class={connector.online ? 'badge on' : 'badge off'}>
                {connector.online ? 'Online' : 'Offline'}
              </span>
            </td>
            <td class="mono">{connector.id}</td>
          </tr>
        ))}
        {connectors?.length === 0 && (
          <tr>
            <td colSpan={4}>No connectors yet: enroll one below.</td>
          </tr>
        )}
      </tbody>
    </table>
  );
}

/** The new edge's start command, with its token: shown once. */
function EnrolledCard(props: { enrolled: Enrollment; onDone: () => void }) {
  return (
    <section class="card secret" aria-labelledby="enrolled-title">
      <h2 id="enrolled-title">Start the edge "{props.enrolled.connector.name}"</h2>
      <p>
        <strong>Shown once.</strong> Copy the token now: the console does not keep it and cannot show it
        again.
      </p>
      <pre tabIndex={0} aria-label="Command to start the edge">
        {`TETHER_NATS_URL=nats://<your-nats>:4222 \\
TETHER_EDGE_ID=${props.enrolled.env.TETHER_EDGE_ID} \\
TETHER_EDGE_TOKEN=${props.enrolled.env.TETHER_EDGE_TOKEN} \\
TETHER_NAMESPACE=${props.enrolled.env.TETHER_NAMESPACE} \\
TETHER_AGENT=codex node dist/apps/edge-connector/src/main.js`}
      </pre>
      <button type="button" onClick={props.onDone}>
        I have copied it
      </button>
    </section>
  );
}
