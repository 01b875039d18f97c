// `npm run events:generate`: writes the lifecycle event JSON Schema and AsyncAPI document into
// docs/events/ from the code (scripts/events/contract.ts).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatedFiles } from './contract.js';

for (const [file, text] of Object.entries(generatedFiles())) {
  writeFileSync(join(process.cwd(), file), text);
  console.log(`wrote ${file}`);
}
