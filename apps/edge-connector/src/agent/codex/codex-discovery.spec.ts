import { chmod, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { discoverCodex, installationId } from './codex-discovery.js';

describe('discoverCodex', () => {
  let root: string;
  const marker = (dir: string): string => path.join(dir, 'ran');

  beforeEach(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'codex-discovery-')));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** A candidate that would leave a marker file if anyone executed it. */
  async function fakeBinary(file: string): Promise<void> {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, `#!/bin/sh\ntouch ${marker(root)}\n`);
    await chmod(file, 0o755);
  }

  it('finds explicit, PATH, local npm and nvm installs without executing them, de-duplicated', async () => {
    const explicit = path.join(root, 'opt', 'codex');
    const onPath = path.join(root, 'bin', 'codex');
    const npmEntry = path.join(root, 'proj', 'node_modules', '@openai', 'codex', 'bin', 'codex.js');
    const home = path.join(root, 'home');
    const nvm = path.join(home, '.nvm', 'versions', 'node', 'v24.1.0', 'bin', 'codex');
    await Promise.all([fakeBinary(explicit), fakeBinary(onPath), fakeBinary(nvm)]);
    await mkdir(path.dirname(npmEntry), { recursive: true });
    await writeFile(npmEntry, '// entry');
    await mkdir(path.join(root, 'proj', 'node_modules', '.bin'), { recursive: true });
    await symlink(npmEntry, path.join(root, 'proj', 'node_modules', '.bin', 'codex'));
    // A second PATH entry linking to the same file is the same installation.
    await mkdir(path.join(root, 'bin2'));
    await symlink(onPath, path.join(root, 'bin2', 'codex'));

    const result = await discoverCodex({
      explicitPath: explicit,
      env: {
        PATH: [path.join(root, 'bin'), path.join(root, 'bin2'), 'relative/bin'].join(path.delimiter),
        HOME: home,
      },
      localDirs: [path.join(root, 'proj')],
      nodePrefix: path.join(root, 'node'),
    });

    expect(result.truncated).toBe(false);
    // Installs outside the sandbox dir (a real /usr/local/bin/codex) do not matter here.
    const mine = result.installations.filter((i) => i.path!.startsWith(root));
    expect(mine.map((i) => [i.source, i.path])).toEqual([
      ['explicit', explicit],
      ['path', onPath],
      ['npm', path.join(root, 'proj', 'node_modules', '.bin', 'codex')],
      ['nvm', nvm],
    ]);
    expect(mine[0]!.id).toBe(installationId(explicit, explicit));
    await expect(realpath(marker(root))).rejects.toThrow();
  });

  it('skips wrappers and non-executable files', async () => {
    const shim = path.join(root, 'volta', 'bin', 'volta-shim');
    await fakeBinary(shim);
    await mkdir(path.join(root, 'bin'));
    await symlink(shim, path.join(root, 'bin', 'codex'));
    await mkdir(path.join(root, 'bin2'));
    await writeFile(path.join(root, 'bin2', 'codex'), 'not executable');

    const result = await discoverCodex({
      env: { PATH: `${path.join(root, 'bin')}${path.delimiter}${path.join(root, 'bin2')}` },
      localDirs: [],
      nodePrefix: path.join(root, 'node'),
    });
    expect(result.installations.filter((i) => i.path!.startsWith(root))).toEqual([]);
  });
});
