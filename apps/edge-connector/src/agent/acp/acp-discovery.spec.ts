import { chmod, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KNOWN_AGENTS } from './acp-agents.js';
import { acpInstallationId, discoverAcp } from './acp-discovery.js';

describe('discoverAcp', () => {
  let root: string;
  const marker = () => path.join(root, 'ran');

  beforeEach(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'acp-discovery-')));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  /** A candidate that would leave a marker file if anyone executed it. */
  async function fakeBinary(file: string): Promise<void> {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, `#!/bin/sh\ntouch ${marker()}\n`);
    await chmod(file, 0o755);
  }

  it('finds known agents on PATH and the npm bundle in node_modules/.bin without executing anything', async () => {
    await fakeBinary(path.join(root, 'bin', 'opencode'));
    await fakeBinary(path.join(root, 'bin', 'codex-acp'));
    const bundle = path.join(root, 'proj', 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js');
    await mkdir(path.dirname(bundle), { recursive: true });
    await writeFile(bundle, '// entry');
    await mkdir(path.join(root, 'proj', 'node_modules', '.bin'), { recursive: true });
    await symlink(bundle, path.join(root, 'proj', 'node_modules', '.bin', 'gemini'));
    // A file named like an agent that resolves to something else is a wrapper, not the agent.
    await fakeBinary(path.join(root, 'other', 'shim.js'));
    await mkdir(path.join(root, 'bin2'));
    await symlink(path.join(root, 'other', 'shim.js'), path.join(root, 'bin2', 'gemini'));

    const { found, truncated } = await discoverAcp({
      agents: KNOWN_AGENTS,
      declared: [],
      env: { PATH: [path.join(root, 'bin'), path.join(root, 'bin2')].join(':') },
      localDirs: [path.join(root, 'proj')],
      nodePrefix: path.join(root, 'none'),
    });
    expect(truncated).toBe(false);
    expect(found.map((entry) => [entry.installation.kind, entry.installation.source])).toEqual([
      ['opencode', 'path'],
      ['codex-acp', 'path'],
      ['gemini', 'npm'],
    ]);
    const gemini = found.find((entry) => entry.installation.kind === 'gemini')!;
    expect(gemini.resolved).toBe(bundle);
    expect(gemini.installation.id).toBe(
      acpInstallationId('gemini', path.join(root, 'proj', 'node_modules', '.bin', 'gemini'), bundle),
    );
    expect(existsSync(marker())).toBe(false);
  });

  it('reports a declared agent with kind acp, and only when its command is launchable', async () => {
    const command = path.join(root, 'agents', 'mine');
    await fakeBinary(command);
    const { found } = await discoverAcp({
      agents: [],
      declared: [
        { name: 'mine', command, args: ['--acp'], env: [] },
        { name: 'gone', command: path.join(root, 'agents', 'missing'), args: [], env: [] },
      ],
      env: {},
      localDirs: [],
      nodePrefix: path.join(root, 'none'),
    });
    expect(found.map((entry) => entry.installation)).toEqual([
      { id: acpInstallationId('acp', command, command), kind: 'acp', path: command, source: 'configured' },
    ]);
  });
});
