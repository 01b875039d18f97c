// Images and docker-compose (issue 12, "Done when"): `docker-compose config -q` passes (Debian's
// docker-compose validates offline), every compose service runs the per-app Dockerfile target the
// Kubernetes manifests run, and the api, router and history images install no dev dependencies
// and no agent CLI (package.json "optionalDependencies"); only the edge image holds Codex.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { jest } from '@jest/globals';
import { parse } from 'yaml';

const run = promisify(execFile);

// docker-compose v1 is a Python program: a few seconds to start on a loaded machine.
jest.setTimeout(120_000);
const ROOT = process.cwd();
const dockerfile = readFileSync(resolve(ROOT, 'Dockerfile'), 'utf8');
const packageJson = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as Record<
  string,
  Record<string, string> | undefined
>;

/** Dockerfile stages: name -> its lines. */
function stages(): Map<string, string[]> {
  const result = new Map<string, string[]>();
  let current: string[] = [];
  for (const line of dockerfile.split('\n')) {
    const from = /^FROM\s+(\S+)\s+AS\s+(\S+)/i.exec(line);
    if (from) {
      current = [line];
      result.set(from[2]!, current);
    } else {
      current.push(line);
    }
  }
  return result;
}

async function composeConfig(
  profile?: string,
): Promise<{ services: Record<string, { build?: { target?: string }; image?: string }> }> {
  const args = [...(profile ? ['--profile', profile] : []), 'config'];
  try {
    const { stdout } = await run('docker-compose', args, {
      cwd: ROOT,
      env: { ...process.env, COMPOSE_PROFILES: profile ?? '' },
    });
    return parse(stdout) as { services: Record<string, { build?: { target?: string }; image?: string }> };
  } catch (error) {
    throw new Error(
      `docker-compose ${args.join(' ')} failed (is Debian's docker-compose installed? .ci/run installs it): ${(error as Error).message}`,
      { cause: error },
    );
  }
}

test('docker-compose config -q passes, with and without the codex profile', async () => {
  await expect(run('docker-compose', ['config', '-q'], { cwd: ROOT })).resolves.toBeDefined();
  await expect(
    run('docker-compose', ['--profile', 'codex', 'config', '-q'], { cwd: ROOT }),
  ).resolves.toBeDefined();
});

test('every compose service of Tether runs its own Dockerfile target, the one Kubernetes runs', async () => {
  const { services } = await composeConfig('codex');
  const targets = Object.fromEntries(
    Object.entries(services)
      .filter(([, service]) => service.build)
      .map(([name, service]) => [name, service.build?.target]),
  );
  expect(targets).toEqual({
    migrate: 'history',
    history: 'history',
    'session-router': 'session-router',
    api: 'api',
    'demo-edge': 'demo-edge',
    'demo-edge-codex': 'demo-edge',
  });
  const names = [...stages().keys()];
  for (const target of Object.values(targets)) expect(names).toContain(target);
  // The manifests' images are these targets (deploy/k8s/base/kustomization.yaml).
  const kustomization = parse(readFileSync(resolve(ROOT, 'deploy/k8s/base/kustomization.yaml'), 'utf8')) as {
    images: { name: string }[];
  };
  expect(kustomization.images.map((image) => image.name).sort()).toEqual([
    'tether-api',
    'tether-history',
    'tether-session-router',
  ]);
});

test('api, router and history images install neither dev dependencies nor agent CLIs; the edge holds Codex', () => {
  expect(packageJson.dependencies?.['@openai/codex']).toBeUndefined();
  expect(packageJson.optionalDependencies?.['@openai/codex']).toBeDefined();
  const all = stages();
  expect(all.get('deps-service')!.join('\n')).toMatch(/npm ci --omit=dev --omit=optional/);
  expect(all.get('deps-edge')!.join('\n')).toMatch(/npm install --prefix \/opt\/codex .*@openai\/codex@/);
  for (const service of ['api', 'session-router', 'history']) {
    const lines = all.get(service)!.join('\n');
    expect(lines).toMatch(/COPY --from=deps-service \/app\/node_modules/);
    expect(lines).not.toMatch(/deps-edge|codex|--from=build \/app\/node_modules/);
  }
  const edge = all.get('edge')!.join('\n');
  expect(edge).toMatch(/COPY --from=deps-service \/app\/node_modules/);
  expect(edge).toMatch(/COPY --from=deps-edge \/opt\/codex \/opt\/codex/);
  expect(edge).toMatch(/ENV PATH=\/opt\/codex\/node_modules\/\.bin:\$PATH/);
  // Every runtime image: the pinned base, tini as PID 1, a health check, a non-root user.
  expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24\.\d+\.\d+-bookworm-slim@sha256:[0-9a-f]{64}$/m);
  const runtime = all.get('runtime')!.join('\n');
  expect(runtime).toMatch(/ENTRYPOINT \["\/usr\/bin\/tini", "--"\]/);
  expect(runtime).toMatch(/HEALTHCHECK .*scripts\/healthcheck\.mjs/);
  expect(runtime).toMatch(/^USER 10001:10001$/m);
  for (const [name, lines] of all) {
    if (name === 'build' || name.startsWith('deps-')) continue;
    const users = lines.filter((line) => line.startsWith('USER '));
    if (users.length > 0) expect({ name, last: users.at(-1) }).toEqual({ name, last: 'USER 10001:10001' });
  }
});
