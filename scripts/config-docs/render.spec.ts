import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { envVariables } from '#config';
import { configurationProblems, renderConfigurationReference, SERVICES } from './render.js';

const DOCUMENT = resolve(process.cwd(), 'docs/configuration.md');

describe('docs/configuration.md', () => {
  it('gives every variable of every service a meaning, and no meaning to a variable nobody reads', () => {
    expect(configurationProblems()).toEqual([]);
  });

  it('is what `npm run docs:config` generates from the schemas today', async () => {
    const current = readFileSync(DOCUMENT, 'utf8');
    const generated = await renderConfigurationReference(DOCUMENT);
    expect(current).toBe(generated);
  });

  it('lists every variable each schema reads, with the reader named', () => {
    const current = readFileSync(DOCUMENT, 'utf8');
    for (const service of SERVICES) {
      for (const variable of service.schemas.flatMap((schema) => envVariables(schema))) {
        const line = current.split('\n').find((candidate) => candidate.startsWith(`| \`${variable.name}\``));
        expect(line).toBeDefined();
        expect(line).toContain(service.name);
      }
    }
  });
});
