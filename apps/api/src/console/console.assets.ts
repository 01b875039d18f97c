// The built console (apps/console, `npm run build:console`) read once at boot and served from
// memory: a handful of small files whose names carry their content hash, so they never change
// under a name and may be cached for a year; index.html is revalidated on every load.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ConsoleAsset {
  body: Buffer;
  contentType: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
};
/** Asset names as Vite writes them (`index-Bx3k_a9Z.js`); anything else is not an asset. */
export const ASSET_NAME = /^[A-Za-z0-9_.-]{1,200}$/;
/** A sanity bound on what is held in memory: the console is far below it. */
const ASSETS_MAX_BYTES = 16 * 1024 * 1024;

/** The repository root: the nearest folder above this file with a package-lock.json. */
function repositoryRoot(from: string): string | undefined {
  let dir = from;
  while (!existsSync(join(dir, 'package-lock.json'))) {
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
  return dir;
}

export function defaultConsoleDir(): string | undefined {
  const root = repositoryRoot(dirname(fileURLToPath(import.meta.url)));
  return root === undefined ? undefined : resolve(root, 'dist', 'console');
}

export interface ConsoleBundle {
  index: string;
  assets: ReadonlyMap<string, ConsoleAsset>;
}

/** The bundle in `dir`, or undefined when it was not built (the api then serves no console). */
export function loadConsoleBundle(dir: string): ConsoleBundle | undefined {
  const indexPath = join(dir, 'index.html');
  if (!existsSync(indexPath)) return undefined;
  const assets = new Map<string, ConsoleAsset>();
  const assetsDir = join(dir, 'assets');
  let total = 0;
  for (const name of existsSync(assetsDir) ? readdirSync(assetsDir) : []) {
    const path = join(assetsDir, name);
    const contentType = CONTENT_TYPES[extname(name)];
    if (!ASSET_NAME.test(name) || contentType === undefined || !statSync(path).isFile()) continue;
    const body = readFileSync(path);
    total += body.length;
    if (total > ASSETS_MAX_BYTES) throw new Error(`The console in ${dir} is larger than expected.`);
    assets.set(name, { body, contentType });
  }
  return { index: readFileSync(indexPath, 'utf8'), assets };
}
