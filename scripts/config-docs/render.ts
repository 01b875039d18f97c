// docs/configuration.md, generated from the schemas every service validates its environment with
// (names and defaults) and the meaning tables beside them. `npm run docs:config` rewrites it;
// render.spec.ts fails when the code and the document disagree.
import { format, resolveConfig } from 'prettier';
import type { z } from 'zod';
import { envVariables, SHARED_VARIABLE_DOCS, type VariableDocs } from '#config';
import { telemetryEnvSchema } from '#telemetry';
import { apiConfigSchema } from '../../apps/api/src/config.js';
import { API_VARIABLE_DOCS } from '../../apps/api/src/config.docs.js';
import { routerConfigSchema } from '../../apps/session-router/src/config.js';
import { ROUTER_VARIABLE_DOCS } from '../../apps/session-router/src/config.docs.js';
import { historyConfigSchema } from '../../apps/history/src/config.js';
import { HISTORY_VARIABLE_DOCS } from '../../apps/history/src/config.docs.js';
import { edgeConfigSchema } from '../../apps/edge-connector/src/config.js';
import { EDGE_VARIABLE_DOCS } from '../../apps/edge-connector/src/config.docs.js';

interface Service {
  name: string;
  schemas: z.ZodType[];
  docs: VariableDocs;
}

/** Every service also reads the telemetry bootstrap's few variables. */
export const SERVICES: readonly Service[] = [
  { name: 'api', schemas: [apiConfigSchema, telemetryEnvSchema], docs: API_VARIABLE_DOCS },
  { name: 'session-router', schemas: [routerConfigSchema, telemetryEnvSchema], docs: ROUTER_VARIABLE_DOCS },
  { name: 'history', schemas: [historyConfigSchema, telemetryEnvSchema], docs: HISTORY_VARIABLE_DOCS },
  { name: 'edge-connector', schemas: [edgeConfigSchema, telemetryEnvSchema], docs: EDGE_VARIABLE_DOCS },
];

interface Row {
  name: string;
  readers: string[];
  /** Default per reader; the same text for all when they agree. */
  defaults: Map<string, string>;
  required: string[];
  meaning?: string;
  documentedDefault?: string;
}

function collect(): Map<string, Row> {
  const rows = new Map<string, Row>();
  for (const service of SERVICES) {
    for (const variable of service.schemas.flatMap((schema) => envVariables(schema))) {
      const row: Row = rows.get(variable.name) ?? {
        name: variable.name,
        readers: [],
        defaults: new Map(),
        required: [],
      };
      row.readers.push(service.name);
      if (variable.required) row.required.push(service.name);
      else
        row.defaults.set(service.name, variable.default === undefined ? 'unset' : `\`${variable.default}\``);
      const own = service.docs[variable.name];
      row.meaning ??= own?.meaning ?? SHARED_VARIABLE_DOCS[variable.name]?.meaning;
      row.documentedDefault ??= own?.default;
      rows.set(variable.name, row);
    }
  }
  return rows;
}

/** Where code and meanings disagree: a variable without a meaning, or a meaning nobody reads. */
export function configurationProblems(): string[] {
  const rows = collect();
  const problems: string[] = [];
  for (const row of rows.values()) {
    const owners = SERVICES.filter((service) => service.docs[row.name]);
    if (row.readers.length > 1 && !SHARED_VARIABLE_DOCS[row.name]) {
      problems.push(
        `${row.name} is read by ${row.readers.join(', ')}: describe it once, in libs/config/src/variables.ts`,
      );
    } else if (row.readers.length === 1 && !row.meaning) {
      problems.push(`${row.name} (${row.readers[0]}) has no meaning in that app's config.docs.ts`);
    }
    if (row.readers.length > 1 && owners.length > 0) {
      problems.push(
        `${row.name} is shared: remove it from ${owners.map((service) => service.name).join(', ')}'s config.docs.ts`,
      );
    }
  }
  for (const service of SERVICES) {
    for (const name of Object.keys(service.docs)) {
      if (!rows.get(name)?.readers.includes(service.name)) {
        problems.push(`${name} is described for ${service.name}, whose schema does not read it`);
      }
    }
  }
  for (const name of Object.keys(SHARED_VARIABLE_DOCS)) {
    if (!rows.has(name))
      problems.push(`${name} is described in libs/config/src/variables.ts, but no schema reads it`);
  }
  return problems;
}

function defaultText(row: Row): string {
  if (row.documentedDefault) return row.documentedDefault;
  const parts: string[] = row.required.length === row.readers.length ? ['**required**'] : [];
  if (row.required.length > 0 && parts.length === 0) parts.push(`**required** by ${row.required.join(', ')}`);
  const distinct = new Set(row.defaults.values());
  if (distinct.size === 1 && row.required.length === 0) return [...distinct][0] as string;
  for (const [service, value] of row.defaults) parts.push(`${service}: ${value}`);
  return parts.join('; ');
}

const ORDER = SERVICES.map((service) => service.name);
function group(row: Row): string {
  return row.readers.length === ORDER.length
    ? 'Every service'
    : row.readers.length > 1
      ? 'Several services'
      : (row.readers[0] as string);
}

const HEADER = `# Configuration reference

Every Tether service is configured by environment variables only, read and validated once at
start; a bad value stops the service with a message naming the variable. This page is generated
from the services' configuration schemas (\`apps/*/src/config.ts\`, the telemetry bootstrap's in
\`libs/telemetry\`) and the meanings beside them (\`config.docs.ts\`,
\`libs/config/src/variables.ts\`): change those, then run \`npm run docs:config\`. A test fails
when this page and the code disagree.

With \`NODE_ENV=production\` (the images set it) every service refuses to start with a development
secret (the values published in \`docker-compose.yml\` and the stack script), an empty one, one
shorter than 32 characters or a placeholder, and names the variable to set.

Beyond these, the OpenTelemetry SDK reads its own standard variables (\`OTEL_EXPORTER_OTLP_PROTOCOL\`,
\`OTEL_EXPORTER_OTLP_HEADERS\`, \`OTEL_TRACES_SAMPLER\`, \`OTEL_TRACES_SAMPLER_ARG\`, \`OTEL_BSP_*\`,
\`OTEL_RESOURCE_ATTRIBUTES\`, ...; see docs/observability.md). The migrations
(\`node scripts/migrate.mjs deploy\`, the Kubernetes Job) read \`DATABASE_URL\`, or
\`TETHER_DATABASE_URL\` when it is unset. The development stack (\`npm run stack\`) reads the
variables the README names.
`;

/** The whole document, formatted as the repository's Prettier settings format it. */
export async function renderConfigurationReference(path: string): Promise<string> {
  const rows = [...collect().values()];
  const groups = ['Every service', 'Several services', ...ORDER];
  const sections = groups.flatMap((name) => {
    const members = rows.filter((row) => group(row) === name);
    if (members.length === 0) return [];
    const lines = members.map(
      (row) =>
        `| \`${row.name}\` | ${row.readers.join(', ')} | ${defaultText(row)} | ${(row.meaning ?? '').replaceAll('|', '\\|')} |`,
    );
    return [
      `## ${name}`,
      '',
      '| variable | read by | default | meaning |',
      '| --- | --- | --- | --- |',
      ...lines,
      '',
    ];
  });
  const text = `${HEADER}\n${sections.join('\n')}`;
  return format(text, { ...(await resolveConfig(path)), parser: 'markdown', filepath: path });
}
