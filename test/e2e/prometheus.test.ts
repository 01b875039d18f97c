// A real Prometheus scrapes a running stack with tracing off, and every shipped dashboard and
// alert expression is evaluated against it: an expression that does not evaluate, or names a
// series no service exports, fails the test. Each app's /metrics is also read directly: the
// standard OpenTelemetry series in seconds and the runtime series are there without any
// trace exporter configured.
import { createServer } from 'node:net';
import { jest } from '@jest/globals';
import type { Stack } from '../../scripts/stack/launcher.js';
import { EXPECTED_SERIES, RUNTIME_SERIES, type AppName } from '../integration/telemetry/expected-series.js';
import { metricsEndpoints, PROMETHEUS_JOB } from '../integration/telemetry/metrics-endpoints.js';
import { parseMetrics } from '../integration/telemetry/prometheus-text.js';
import { PrometheusServer } from '../integration/telemetry/prometheus-server.js';
import {
  dashboardQueries,
  dashboardVariables,
  recordedNames,
  ruleQueries,
  seriesIn,
  withAllVariables,
} from '../integration/telemetry/shipped-queries.js';
import { printOutputOnFailure, startE2eStack, type E2eStack } from '../support/e2e-stack.js';
import { scriptedTurn } from './scripted-turn.js';
import { eventually } from '#test-support';

jest.setTimeout(180_000);

/** This suite's loopback ports. */
const PORT_RANGE = { first: 14_850, last: 14_899 };

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function prometheusPort(): Promise<number> {
  for (let port = PORT_RANGE.first; port <= PORT_RANGE.last; port += 1) if (await portFree(port)) return port;
  throw new Error('no free port for Prometheus in this suite range');
}

let e2e: E2eStack | undefined;
let stack: Stack;
let prometheus: PrometheusServer | undefined;
let endpoints: Record<AppName, string>;

beforeAll(async () => {
  e2e = await startE2eStack({
    label: 'e2eprom',
    jwtSecret: 'e2e-jwt-secret-0123456789',
    edgeSecret: 'e2e-edge-secret-0123456789',
    owner: `prom${Date.now() % 100000}`,
    stack: {
      extraEnv: {
        // Tracing off: no exporter and no OTLP endpoint. The series must be there regardless.
        OTEL_TRACES_EXPORTER: '',
        OTEL_EXPORTER_OTLP_ENDPOINT: '',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
        TETHER_METRICS_PORT: '0',
        TETHER_HISTORY_KEY: 'e2e-history-key-0123456789abcdef0123',
      },
    },
  });
  stack = e2e.stack;
  endpoints = metricsEndpoints(stack);
  // Traffic on every hop: HTTP, NATS requests, JetStream, history's database writes, a turn.
  await scriptedTurn(e2e.owner, stack, e2e.projectDir, 'prometheus e2e turn');
  prometheus = new PrometheusServer(await prometheusPort());
  await prometheus.start(
    (Object.keys(endpoints) as AppName[]).map((app) => ({
      job: PROMETHEUS_JOB[app],
      address: new URL(endpoints[app]).host,
    })),
  );
});

afterAll(async () => {
  await prometheus?.stop();
  await e2e?.close();
});

printOutputOnFailure(() => stack, 100);
printOutputOnFailure(() => prometheus, 40);

test('with tracing off every app serves the standard series in seconds and the runtime series', async () => {
  for (const [app, url] of Object.entries(endpoints) as [AppName, string][]) {
    let last = '';
    const metrics = await eventually(async () => {
      const response = await fetch(`${url}/metrics`);
      if (response.status !== 200) return undefined;
      const parsed = parseMetrics(await response.text());
      last = [...parsed.seriesNames].join(' ');
      const wanted = [...EXPECTED_SERIES[app], ...RUNTIME_SERIES];
      return wanted.every((name) => parsed.seriesNames.has(name)) ? parsed : undefined;
    }, `${app} exporting its series`).catch((error: Error) => {
      throw new Error(`${error.message}; it exports ${last}`);
    });
    for (const name of [...EXPECTED_SERIES[app], ...RUNTIME_SERIES])
      expect(metrics.seriesNames).toContain(name);
    // No duration left in milliseconds, and every duration family carries its unit.
    for (const name of metrics.seriesNames) {
      expect(name).not.toMatch(/_milliseconds|_ms_/);
      if (/duration/.test(name)) expect([app, name]).toEqual([app, expect.stringMatching(/_seconds(_|$)/)]);
    }
    const samples = metrics.samples;
    // The resource names the build and the environment.
    const target = samples.find((sample) => sample.name === 'target_info');
    expect(target?.labels).toMatch(/service_version="\d+\.\d+\.\d+"/);
    expect(target?.labels).toMatch(/deployment_environment_name="/);
    // Standard histograms have Tether's boundaries: 1 ms and the 15 s watch wait.
    const standard =
      app === 'api'
        ? 'http_server_request_duration_seconds_bucket'
        : 'messaging_process_duration_seconds_bucket';
    const bounds = new Set(
      samples
        .filter((sample) => sample.name === standard)
        .map((sample) => /le="([^"]+)"/.exec(sample.labels)?.[1]),
    );
    expect(bounds).toContain('0.001');
    expect(bounds).toContain('15');
  }
});

test('Prometheus scrapes every app, and every dashboard and alert expression evaluates on real series', async () => {
  const server = prometheus!;
  // Every job up.
  const up = await eventually(async () => {
    const samples = await server.query('up == 1');
    return samples.length === Object.keys(endpoints).length ? samples : undefined;
  }, 'every target being scraped');
  expect(up.map((sample) => sample.metric.job).sort()).toEqual(Object.values(PROMETHEUS_JOB).sort());

  const recorded = recordedNames();
  // Every name the shipped queries read must be exported by some service (or recorded).
  const named = new Set(
    [...dashboardQueries(), ...ruleQueries()]
      .flatMap((query) => seriesIn(query.expr))
      .filter((name) => !recorded.has(name)),
  );
  const missing = await eventually(async () => {
    const held = await server.seriesNames();
    const absent = [...named].filter((name) => !held.has(name));
    return absent.length === 0 ? absent : undefined;
  }, 'Prometheus holding every series the queries name').catch(async (error: Error) => {
    const held = await server.seriesNames();
    throw new Error(`${error.message}: missing ${[...named].filter((name) => !held.has(name)).join(', ')}`);
  });
  expect(missing).toEqual([]);

  // Every expression evaluates (a syntax or type error fails), with the variables at "All".
  const errors: string[] = [];
  for (const query of [...dashboardQueries(), ...ruleQueries()]) {
    await server
      .query(withAllVariables(query.expr))
      .catch((error: Error) => errors.push(`${query.where}: ${error.message}`));
  }
  for (const variable of dashboardVariables()) {
    const values = await server
      .query(`count by (${variable.label}) (${withAllVariables(variable.selector)})`)
      .catch((error: Error) => {
        errors.push(`variable ${variable.name}: ${error.message}`);
        return [];
      });
    expect([variable.name, values.length > 0]).toEqual([variable.name, true]);
  }
  expect(errors).toEqual([]);

  // The rules as Prometheus runs them: every one healthy, and the error ratios a value (0), not empty.
  const health = await eventually(async () => {
    const rules = await server.ruleHealth();
    return rules.length > 0 && rules.every((rule) => rule.health !== 'unknown') ? rules : undefined;
  }, 'every rule evaluated once');
  expect(health.filter((rule) => rule.health !== 'ok')).toEqual([]);
  for (const ratio of ['tether:http_error_ratio:rate5m', 'tether:nats_error_ratio:rate5m']) {
    const samples = await eventually(async () => {
      const found = await server.query(ratio);
      return found.length > 0 ? found : undefined;
    }, `${ratio} recorded`);
    expect(samples).toHaveLength(1);
  }
  // A healthy stack fires nothing (alerts still pending their `for` are fine).
  const firing = await server.query('ALERTS{alertstate="firing"}');
  expect(firing.map((sample) => sample.metric.alertname)).toEqual([]);
});
