// A reverse proxy that serves the api under a path prefix (`/tether/` → `/`), as a deployment
// behind nginx or an ingress would: the console must work there with no origin written in it.
import { createServer, request, type Server } from 'node:http';

export interface PrefixProxy {
  url: string;
  close(): Promise<void>;
}

export async function startPrefixProxy(prefix: string, target: string, port: number): Promise<PrefixProxy> {
  const upstream = new URL(target);
  const server: Server = createServer((incoming, outgoing) => {
    const path = incoming.url ?? '/';
    if (!path.startsWith(`${prefix}/`)) {
      outgoing.writeHead(404).end('not under the prefix');
      return;
    }
    const forwarded = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: path.slice(prefix.length),
        headers: { ...incoming.headers, host: upstream.host },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', () => outgoing.destroy());
    outgoing.on('close', () => forwarded.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}${prefix}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
