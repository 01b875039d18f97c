import { createServer } from 'node:http';
import { loadConfig } from '#config';
import { z } from 'zod';
import { loadTelemetryConfig, metricsPortVar } from './config.js';
import { JsonLogger } from './logger.js';
import { subjectLabel } from './metrics.js';
import { prometheusName } from './reader.js';
import { defaultServiceName } from './service-name.js';
import { listeningCheck, readiness } from './health.js';

test('subject labels drop the namespace and ids, so the label set stays small', () => {
  expect(subjectLabel('tether.router.edge-agent')).toBe('router.edge-agent');
  expect(subjectLabel('ns1.edge.123456.rpc')).toBe('edge.*.rpc');
  expect(subjectLabel('ns1.session.0123abcd.journal')).toBe('session.*.journal');
  // An edge's own heartbeat and update subjects carry its id; their labels do not.
  expect(subjectLabel('ns1.edge.123456.heartbeat')).toBe('edge.heartbeat');
  expect(subjectLabel('ns1.router.session-update.123456')).toBe('router.session-update');
});

test('Prometheus names carry the unit once: seconds, bytes; annotations and ratios add nothing', () => {
  expect(prometheusName('tether.http.request.duration', 's')).toBe('tether.http.request.duration_seconds');
  expect(prometheusName('process.memory.usage', 'By')).toBe('process.memory.usage_bytes');
  expect(prometheusName('tether.x_seconds', 's')).toBe('tether.x_seconds');
  expect(prometheusName('messaging.client.sent.messages', '{message}')).toBe(
    'messaging.client.sent.messages',
  );
  expect(prometheusName('nodejs.eventloop.utilization', '1')).toBe('nodejs.eventloop.utilization');
});

test('TETHER_METRICS_PORT: default, off, ephemeral, and a clear error for a bad value', () => {
  const schema = z.object({ TETHER_METRICS_PORT: metricsPortVar(9465) });
  expect(loadConfig(schema, {}).TETHER_METRICS_PORT).toBe(9465);
  expect(loadConfig(schema, { TETHER_METRICS_PORT: 'off' }).TETHER_METRICS_PORT).toBe('off');
  expect(loadConfig(schema, { TETHER_METRICS_PORT: '' }).TETHER_METRICS_PORT).toBe('off');
  expect(loadConfig(schema, { TETHER_METRICS_PORT: '0' }).TETHER_METRICS_PORT).toBe(0);
  expect(() => loadConfig(schema, { TETHER_METRICS_PORT: '70000' })).toThrow(/TETHER_METRICS_PORT/);
  expect(() => loadConfig(schema, { TETHER_METRICS_PORT: 'abc' })).toThrow(/TETHER_METRICS_PORT/);
});

test('the service name comes from the entry script', () => {
  expect(defaultServiceName('/srv/dist/apps/session-router/src/main.js')).toBe('tether-session-router');
  expect(defaultServiceName(undefined)).toBe('tether');
});

test('the JSON logger writes one object per line with level and context, honouring levels', () => {
  const out: string[] = [];
  const err: string[] = [];
  const logger = new JsonLogger(
    (line) => out.push(line),
    (line) => err.push(line),
  );
  logger.log('Session 1 expired after idle', 'Leases');
  logger.error('Handler failed', 'stack here', 'RpcErrorFilter');
  logger.setLogLevels(['error']);
  logger.log('dropped');
  expect(out).toHaveLength(1);
  expect(JSON.parse(out[0]!)).toMatchObject({
    level: 'log',
    context: 'Leases',
    msg: 'Session 1 expired after idle',
  });
  expect(JSON.parse(err[0]!)).toMatchObject({
    level: 'error',
    context: 'RpcErrorFilter',
    stack: 'stack here',
  });
});

test('readiness names each dependency and fails when one is down', async () => {
  const report = await readiness({
    nats: () => Promise.resolve(),
    redis: () => Promise.reject(new Error('x')),
  });
  expect(report).toEqual({ ready: false, checks: { nats: 'ok', redis: 'down' } });
});

test('tracing is on only when an exporter or an OTLP endpoint is configured', () => {
  expect(loadTelemetryConfig({}).tracesConfigured).toBe(false);
  expect(loadTelemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracesConfigured).toBe(
    true,
  );
  expect(
    loadTelemetryConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }).tracesConfigured,
  ).toBe(true);
  expect(loadTelemetryConfig({ OTEL_TRACES_EXPORTER: 'console' }).tracesConfigured).toBe(true);
});

test('a public listener is ready only while it accepts connections', async () => {
  const server = createServer();
  const check = () => readiness({ http: listeningCheck(server) });
  expect(await check()).toEqual({ ready: false, checks: { http: 'down' } });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  expect(await check()).toEqual({ ready: true, checks: { http: 'ok' } });
  await new Promise<void>((resolve) => server.close(() => resolve()));
  expect(await check()).toEqual({ ready: false, checks: { http: 'down' } });
});
