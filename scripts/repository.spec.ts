// The repository stands alone: its docs and code never send a reader to a folder beside the
// repository (design notes a user of Tether does not have) or to a path of one developer's machine.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const SCANNED = ['README.md', 'docs', 'apps', 'libs', 'scripts', 'bench', 'examples', 'deploy', 'test'];
const THIS_FILE = 'scripts/repository.spec.ts';

/** What no tracked file may contain, each with why. */
const FORBIDDEN: { pattern: RegExp; why: string }[] = [
  { pattern: /\.\.\/shared\b/, why: 'a folder beside the repository' },
  { pattern: /\/work\/(?:main|wt|shared|\.library)\b/, why: "a developer machine's work tree" },
  { pattern: /\/tmp\/[\w.-]+\/node_modules\//, why: 'a tool installed in a temporary folder' },
];

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--', ...SCANNED], { cwd: root, encoding: 'utf8' });
  return out
    .split('\0')
    .filter((file) => file !== '' && file !== THIS_FILE && !/\.(png|jpe?g|ico|woff2?)$/.test(file));
}

describe('the repository stands alone', () => {
  it('points no reader at a folder beside the repository or at a path of a developer machine', () => {
    const offences: string[] = [];
    for (const file of trackedFiles()) {
      const lines = readFileSync(`${root}/${file}`, 'utf8').split('\n');
      lines.forEach((line, index) => {
        for (const { pattern, why } of FORBIDDEN) {
          if (pattern.test(line)) offences.push(`${file}:${index + 1}: ${why}: ${line.trim().slice(0, 120)}`);
        }
      });
    }
    expect(offences).toEqual([]);
  });

  it('recognises each forbidden kind of path', () => {
    // Built from parts, so this file holds none of the paths it forbids.
    const samples = [
      ['see ..', 'shared', 'design', 'x.md'].join('/'),
      ['cd ', 'work', 'main'].join('/'),
      ['PATH=', 'tmp', 'node24', 'node_modules', 'node', 'bin'].join('/'),
    ];
    for (const [index, sample] of samples.entries()) {
      expect(FORBIDDEN[index]?.pattern.test(sample)).toBe(true);
    }
    const fine = ['join(homedir(), ".nvm")', "project: '/home/alice/project'", 'os.tmpdir()'];
    for (const sample of fine) expect(FORBIDDEN.some(({ pattern }) => pattern.test(sample))).toBe(false);
  });
});
