// deploy/k8s (issue 12, "Done when"): both overlays render offline with `kubectl kustomize`, every
// object validates against the Kubernetes schemas (kubernetes-models, and the Prometheus
// Operator's for ServiceMonitor and PrometheusRule), and the invariants a platform team relies on
// hold: probes on the ops port, a locked-down securityContext, requests and limits, a
// PodDisruptionBudget per Deployment, NetworkPolicies that select pods, the production shape,
// and a PrometheusRule that is the generated form of deploy/observability's rule file.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parse, parseAllDocuments } from 'yaml';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import {
  PrometheusRule,
  ServiceMonitor,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';

const run = promisify(execFile);
const ROOT = process.cwd();
/** `dev-operator`: the dev overlay with its NATS in operator mode (both NATS components). */
const OVERLAYS = ['dev', 'dev-operator', 'production'] as const;

/** Shutdown budget (libs/telemetry lifecycle.ts): telemetry flush bound after the grace period. */
const TELEMETRY_FLUSH_S = 5;

interface Validatable {
  validate(): void;
}
const MODELS: Record<string, new (data: never) => Validatable> = {
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'batch/v1/Job': Job,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/ConfigMap': ConfigMap,
  'v1/Namespace': Namespace,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

/* eslint-disable @typescript-eslint/no-explicit-any -- rendered manifests are untyped YAML. */
type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: any;
  data?: any;
};

const rendered = new Map<string, K8sObject[]>();

async function render(dir: string): Promise<K8sObject[]> {
  const { stdout } = await run('kubectl', ['kustomize', dir], { maxBuffer: 16 * 1024 * 1024 });
  return parseAllDocuments(stdout).map((document) => document.toJSON() as K8sObject);
}

/** The dev overlay as its comment says to run it in operator mode (kustomize wants relative paths). */
async function renderDevOperator(): Promise<K8sObject[]> {
  const dir = mkdtempSync(join(tmpdir(), 'tether-k8s-'));
  const from = (path: string) => relative(dir, resolve(ROOT, path));
  try {
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        `resources: [${from('deploy/k8s/overlays/dev')}]`,
        'components:',
        `  - ${from('deploy/k8s/components/nats-operator-server')}`,
        `  - ${from('deploy/k8s/components/nats-credentials')}`,
        '',
      ].join('\n'),
    );
    return await render(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  for (const overlay of ['dev', 'production']) {
    rendered.set(overlay, await render(resolve(ROOT, 'deploy/k8s/overlays', overlay)));
  }
  rendered.set('dev-operator', await renderDevOperator());
}, 120_000);

const objects = (overlay: string) => rendered.get(overlay) ?? [];
const ofKind = (overlay: string, kind: string) => objects(overlay).filter((object) => object.kind === kind);
const workloads = (overlay: string) =>
  objects(overlay).filter((object) => ['Deployment', 'StatefulSet', 'Job'].includes(object.kind));
const tetherDeployments = (overlay: string) =>
  ofKind(overlay, 'Deployment').filter(
    (object) => object.metadata.labels?.['app.kubernetes.io/part-of'] === 'tether',
  );
const selects = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  Object.entries(selector ?? {}).every(([key, value]) => labels?.[key] === value);

test('the schemas refuse a malformed object (the validation below can fail)', () => {
  const deployment = tetherDeployments('production')[0]!;
  const broken = { ...deployment, spec: { ...deployment.spec, replicas: 'two' } };
  expect(() => new Deployment(broken as never).validate()).toThrow();
});

describe.each(OVERLAYS)('the %s overlay', (overlay) => {
  it('validates every object against its Kubernetes schema', () => {
    expect(objects(overlay).length).toBeGreaterThan(10);
    for (const object of objects(overlay)) {
      const Model = MODELS[`${object.apiVersion}/${object.kind}`];
      if (!Model)
        throw new Error(`no schema for ${object.apiVersion} ${object.kind} ${object.metadata.name}`);
      expect(() => new Model(object as never).validate()).not.toThrow();
    }
  });

  it('runs every pod non-root, read-only, without capabilities, under RuntimeDefault seccomp, with requests and limits', () => {
    for (const workload of workloads(overlay)) {
      const pod = workload.spec.template.spec;
      const where = `${workload.kind} ${workload.metadata.name}`;
      expect({ where, runAsNonRoot: pod.securityContext?.runAsNonRoot }).toEqual({
        where,
        runAsNonRoot: true,
      });
      expect({ where, seccomp: pod.securityContext?.seccompProfile?.type }).toEqual({
        where,
        seccomp: 'RuntimeDefault',
      });
      expect({ where, token: pod.automountServiceAccountToken }).toEqual({ where, token: false });
      // A Secret mounted 0400 belongs to root unless fsGroup hands it to the pod's group.
      if ((pod.volumes ?? []).some((volume: { secret?: unknown }) => volume.secret)) {
        expect({ where, fsGroup: pod.securityContext.fsGroup }).toEqual({
          where,
          fsGroup: pod.securityContext.runAsGroup,
        });
      }
      for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
        const context = container.securityContext ?? {};
        const what = `${where}/${container.name}`;
        expect({
          what,
          readOnly: context.readOnlyRootFilesystem,
          escalation: context.allowPrivilegeEscalation,
        }).toEqual({
          what,
          readOnly: true,
          escalation: false,
        });
        expect({ what, drop: context.capabilities?.drop }).toEqual({ what, drop: ['ALL'] });
        for (const bound of ['requests', 'limits']) {
          expect({
            what,
            bound,
            cpu: Boolean(container.resources?.[bound]?.cpu),
            memory: Boolean(container.resources?.[bound]?.memory),
          }).toEqual({
            what,
            bound,
            cpu: true,
            memory: true,
          });
        }
      }
    }
  });

  it('probes every Tether container on /healthz and /readyz at its ops port, and every other server too', () => {
    expect(
      tetherDeployments(overlay)
        .map((deployment) => deployment.metadata.name)
        .sort(),
    ).toEqual(['tether-api', 'tether-history', 'tether-session-router']);
    for (const deployment of tetherDeployments(overlay)) {
      const pod = deployment.spec.template.spec;
      for (const container of pod.containers) {
        const ports = (container.ports ?? []).map((port: { name?: string }) => port.name);
        expect(ports).toContain('ops');
        expect(container.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'ops' });
        expect(container.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'ops' });
        expect(container.startupProbe?.httpGet).toEqual({ path: '/healthz', port: 'ops' });
      }
      // SIGTERM: delay, grace and the telemetry flush fit in the pod's termination grace period.
      const config = ofKind(overlay, 'ConfigMap').find((map) => map.metadata.name === 'tether-config')!.data;
      const budget =
        (Number(config.TETHER_SHUTDOWN_DELAY_MS) + Number(config.TETHER_SHUTDOWN_GRACE_MS)) / 1000;
      expect(budget + TELEMETRY_FLUSH_S).toBeLessThan(pod.terminationGracePeriodSeconds);
    }
    for (const statefulSet of ofKind(overlay, 'StatefulSet')) {
      for (const container of statefulSet.spec.template.spec.containers) {
        expect(container.readinessProbe).toBeDefined();
        expect(container.livenessProbe).toBeDefined();
      }
    }
  });

  it('gives every Deployment exactly one PodDisruptionBudget', () => {
    const budgets = ofKind(overlay, 'PodDisruptionBudget');
    for (const deployment of ofKind(overlay, 'Deployment')) {
      const labels = deployment.spec.template.metadata.labels;
      const covering = budgets.filter((budget) => selects(budget.spec.selector.matchLabels, labels));
      expect({ deployment: deployment.metadata.name, budgets: covering.length }).toEqual({
        deployment: deployment.metadata.name,
        budgets: 1,
      });
    }
  });

  it('selects pods with every Service and NetworkPolicy, on ports those pods declare', () => {
    const pods = workloads(overlay).map((workload) => workload.spec.template);
    const portsOf = (labels: Record<string, string> | undefined) =>
      pods
        .filter((pod) => selects(labels, pod.metadata.labels))
        .flatMap((pod) =>
          pod.spec.containers.flatMap((container: { ports?: { name?: string }[] }) => container.ports ?? []),
        )
        .map((port) => port.name);
    for (const service of ofKind(overlay, 'Service')) {
      const declared = portsOf(service.spec.selector);
      expect({ service: service.metadata.name, selects: declared.length > 0 }).toEqual({
        service: service.metadata.name,
        selects: true,
      });
      for (const port of service.spec.ports) expect(declared).toContain(port.targetPort);
    }
    for (const policy of ofKind(overlay, 'NetworkPolicy')) {
      const selector = policy.spec.podSelector.matchLabels;
      const matched = pods.filter((pod) => selects(selector, pod.metadata.labels));
      expect({ policy: policy.metadata.name, selects: matched.length > 0 }).toEqual({
        policy: policy.metadata.name,
        selects: true,
      });
      const declared = portsOf(selector);
      for (const rule of policy.spec.ingress ?? []) {
        for (const port of rule.ports ?? []) expect(declared).toContain(port.port);
      }
    }
  });
});

describe('the production overlay', () => {
  const find = (kind: string, name: string) =>
    ofKind('production', kind).find((object) => object.metadata.name === name);

  it('runs api x2, session-router x3 and history x2, spread across nodes, with HPAs for api and router', () => {
    const replicas = Object.fromEntries(
      tetherDeployments('production').map((deployment) => [
        deployment.metadata.name,
        deployment.spec.replicas,
      ]),
    );
    expect(replicas).toEqual({ 'tether-api': 2, 'tether-session-router': 3, 'tether-history': 2 });
    for (const deployment of tetherDeployments('production')) {
      const spread = deployment.spec.template.spec.topologySpreadConstraints ?? [];
      const byHost = spread.find(
        (constraint: { topologyKey: string }) => constraint.topologyKey === 'kubernetes.io/hostname',
      );
      expect(byHost?.labelSelector.matchLabels).toEqual({
        'app.kubernetes.io/name': deployment.metadata.name,
      });
    }
    const scaled = Object.fromEntries(
      ofKind('production', 'HorizontalPodAutoscaler').map((hpa) => [
        hpa.spec.scaleTargetRef.name,
        hpa.spec.minReplicas,
      ]),
    );
    expect(scaled).toEqual({ 'tether-api': 2, 'tether-session-router': 3 });
  });

  it('takes ingress only on the api HTTP port and ops ports only from the monitoring namespace', () => {
    const deny = find('NetworkPolicy', 'tether-default-deny-ingress');
    expect(deny?.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress'] });
    const policies = ofKind('production', 'NetworkPolicy').filter((policy) => policy !== deny);
    for (const policy of policies) {
      for (const rule of policy.spec.ingress) {
        const ports = rule.ports.map((port: { port: string }) => port.port);
        if (ports.includes('ops')) {
          expect(rule.from).toEqual([
            { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
          ]);
        } else {
          expect(ports).toEqual(['http']);
          expect(policy.spec.podSelector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'tether-api' });
        }
      }
    }
  });

  it('reads external NATS (JetStream replicas 3) from the ConfigMap and credentials from the Secret', () => {
    const config = find('ConfigMap', 'tether-config')?.data;
    expect(config.TETHER_JETSTREAM_REPLICAS).toBe('3');
    expect(config.TETHER_NATS_URL.split(',')).toHaveLength(3);
    expect(ofKind('production', 'Secret')).toEqual([]);
    expect(ofKind('production', 'StatefulSet')).toEqual([]);
    const history = find('Deployment', 'tether-history')!.spec.template.spec;
    expect(history.initContainers.map((container: { name: string }) => container.name)).toEqual([
      'wait-for-migrations',
    ]);
    expect(find('Job', 'tether-migrate')).toBeDefined();
  });

  it('alerts with the generated form of deploy/observability/prometheus/alerts.yml', async () => {
    await expect(
      run(process.execPath, [resolve(ROOT, 'scripts/k8s-rules.mjs'), '--check']),
    ).resolves.toBeDefined();
    const source = parse(
      readFileSync(resolve(ROOT, 'deploy/observability/prometheus/alerts.yml'), 'utf8'),
    ) as { groups: unknown };
    expect(find('PrometheusRule', 'tether')?.spec.groups).toEqual(source.groups);
    expect(find('ServiceMonitor', 'tether')?.spec.endpoints).toEqual([
      { port: 'ops', path: '/metrics', interval: '15s' },
    ]);
  });
});

/** The NATS user files a Tether Deployment's container reads, with the Secret keys they come from. */
function natsFiles(deployment: K8sObject): { env: Record<string, string>; files: Record<string, string> } {
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  const env = Object.fromEntries(
    (container.env ?? [])
      .filter((variable: { name: string }) => variable.name.startsWith('TETHER_NATS_'))
      .map((variable: { name: string; value: string }) => [variable.name, variable.value]),
  );
  const mount = (container.volumeMounts ?? []).find((m: { name: string }) => m.name === 'nats-creds');
  const volume = (pod.volumes ?? []).find((v: { name: string }) => v.name === 'nats-creds');
  const files = Object.fromEntries(
    Object.entries(env).map(([name, path]) => [
      name,
      mount && path.startsWith(`${mount.mountPath}/`)
        ? `${volume?.secret?.secretName}:${path.slice(mount.mountPath.length + 1)}`
        : 'not mounted',
    ]),
  );
  return { env, files };
}

describe.each(['production', 'dev-operator'])('NATS users in the %s render', (overlay) => {
  it('gives each service its own creds file from its own Secret, and history the edge authority', () => {
    const byName = Object.fromEntries(
      tetherDeployments(overlay).map((deployment) => [deployment.metadata.name, natsFiles(deployment).files]),
    );
    expect(byName).toEqual({
      'tether-api': { TETHER_NATS_CREDS: 'tether-nats-api:api.creds' },
      'tether-session-router': {
        TETHER_NATS_CREDS: 'tether-nats-session-router:session-router.creds',
      },
      'tether-history': {
        TETHER_NATS_CREDS: 'tether-nats-history:history.creds',
        TETHER_NATS_ACCOUNT: 'tether-nats-history:account.pub',
        TETHER_NATS_ACCOUNT_SIGNING_KEY: 'tether-nats-history:account-signing.nk',
        TETHER_NATS_OPERATOR_SIGNING_KEY: 'tether-nats-history:operator-signing.nk',
        TETHER_NATS_SYSTEM_CREDS: 'tether-nats-history:system.creds',
      },
    });
  });
});

describe('the dev overlay', () => {
  it('runs an open NATS by default and the shipped operator-mode configuration with both components', () => {
    const nats = (overlay: string) =>
      ofKind(overlay, 'StatefulSet').find((set) => set.metadata.name === 'nats')!;
    expect(nats('dev').spec.template.spec.containers[0].args ?? []).not.toContain('-c');
    expect(tetherDeployments('dev').map((deployment) => natsFiles(deployment).env)).toEqual([{}, {}, {}]);
    const server = nats('dev-operator').spec.template.spec;
    expect(server.containers[0].args).toEqual(['-c', '/etc/nats/nats-server.conf']);
    const config = ofKind('dev-operator', 'ConfigMap').find((map) =>
      map.metadata.name.startsWith('tether-nats-config'),
    );
    expect(config?.data['nats-server.conf']).toBe(
      readFileSync(resolve(ROOT, 'deploy/nats/nats-server.conf'), 'utf8'),
    );
    expect(server.volumes).toEqual(
      expect.arrayContaining([
        { name: 'nats-auth', secret: { secretName: 'tether-nats-server', defaultMode: 0o400 } },
      ]),
    );
  });
});
