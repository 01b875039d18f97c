// The repository stands alone: what it says can be followed with nothing but the repository.
// Its docs and code never send a reader to a folder beside the repository (design notes a user
// of Tether does not have), to a path of one developer's machine, to a Markdown file it lacks, or
// to a section of the reference designs that docs/reference.md does not summarise.
//
// What counts as a machine path, precisely (each rule below says why it is a rule):
// - forbidden: `/work/…` (the work tree of the machine Tether was built on), `/tmp/<name>` (one
//   run's temporary folder; code makes its own with `os.tmpdir()` and `mkdtemp`), macOS and
//   Windows temporary and home folders, `/root/…`, and `/home/<name>/…` unless `<name>` is one of
//   the invented users examples use (EXAMPLE_USERS);
// - allowed: a bare `/tmp` (a project or a mount point in examples and manifests), system paths
//   (`/usr/bin/chromium`, `/opt/tether`, `/srv/project`), routes (`/api/v1/…`), and URLs.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const SCANNED = ['README.md', 'docs', 'apps', 'libs', 'scripts', 'bench', 'examples', 'deploy', 'test'];
const THIS_FILE = 'scripts/repository.spec.ts';
/** The page that summarises every section of the reference designs the code cites. */
const REFERENCE_DOC = 'docs/reference.md';
/** Home folders examples may use: invented users, never a developer's own account. */
const EXAMPLE_USERS = ['alice', 'bob', 'me', 'owner', 'dev', 'a', 'user', 'you'];

/** What no tracked file may contain, each with why. */
const FORBIDDEN: { pattern: RegExp; why: string }[] = [
  { pattern: /\.\.\/shared\b/, why: 'a folder beside the repository' },
  { pattern: /(?<![\w.~-])\/work\/[\w.-]/, why: "a developer machine's work tree" },
  { pattern: /(?<![\w.~$}-])\/tmp\/[\w.-]/, why: 'one temporary folder (make one with os.tmpdir())' },
  { pattern: /\/(?:var\/folders|private\/var)\/[\w.-]/, why: 'a macOS temporary folder' },
  { pattern: /(?<![\w.~-])\/(?:Users|root)\/[\w.-]/, why: "a developer's home folder" },
  {
    pattern: new RegExp(`(?<![\\w.~-])/home/(?!(?:${EXAMPLE_USERS.join('|')})\\b)[\\w.-]+`),
    why: `a home folder of a real account (examples use ${EXAMPLE_USERS.join(', ')})`,
  },
  { pattern: /\b[A-Za-z]:\\{1,2}Users\\/, why: "a Windows user's folder" },
  { pattern: /\bseed\s+`?\d{3}_/i, why: 'a design seed file the repository does not hold' },
  {
    pattern: /\bARCHITECTURE\b(?!\.md)/,
    why: 'the design notes beside the repository (docs/architecture.md)',
  },
];

/** Files git tracks or would track (new ones too, so a check before the first commit sees them). */
function trackedFiles(): string[] {
  const out = execFileSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...SCANNED],
    { cwd: root, encoding: 'utf8' },
  );
  return out
    .split('\0')
    .filter((file) => file !== '' && file !== THIS_FILE && !/\.(png|jpe?g|ico|woff2?)$/.test(file));
}

const linesOf = (file: string): string[] => readFileSync(join(root, file), 'utf8').split('\n');
const withoutUrls = (line: string): string => line.replace(/\b[a-z][\w+.-]*:\/\/\S+/gi, '');

/** Every offence of one line against FORBIDDEN. */
function forbiddenIn(line: string): string[] {
  return FORBIDDEN.filter(({ pattern }) => pattern.test(line)).map(({ why }) => why);
}

/** A Markdown file a line names must be in the repository (from the root, beside it, or in docs/). */
function missingMarkdown(file: string, line: string): string[] {
  const names = withoutUrls(line).match(/[\w./-]*\w\.md\b/g) ?? [];
  return names.filter(
    (name) =>
      ![name, join(dirname(file), name), join('docs', name)].some((path) => existsSync(join(root, path))),
  );
}

/** A relative link of a Markdown page must point at a file or folder of the repository. */
function brokenLinks(file: string, line: string): string[] {
  if (!file.endsWith('.md')) return [];
  const targets = [...line.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)].map((match) => match[1] ?? '');
  return targets.filter(
    (target) => !/^[a-z][\w+.-]*:/i.test(target) && !existsSync(normalize(join(root, dirname(file), target))),
  );
}

interface Citation {
  section: string;
  orca: boolean;
}

/** `§n` citations of a line; RFC sections are not the reference's. "orca" before it names its part. */
function citationsIn(line: string): Citation[] {
  return [...line.matchAll(/§\s?(\d+(?:\.\d+)*)/g)]
    .filter((match) => !/RFC \d+,? $/.test(line.slice(0, match.index).slice(-12)))
    .map((match) => ({ section: match[1] ?? '', orca: /orca/i.test(line.slice(0, match.index)) }));
}

/** The sections docs/reference.md summarises: § numbers in its headings and bold labels, by part. */
function referenceSections(): { liaison: Set<string>; orca: Set<string> } {
  const text = readFileSync(join(root, REFERENCE_DOC), 'utf8');
  const split = text.indexOf('\n## Part 2');
  const sectionsOf = (part: string): Set<string> => {
    const labels = [
      ...part.split('\n').filter((line) => /^#{2,4} /.test(line)),
      ...[...part.matchAll(/\*\*(§[^*]+)\*\*/g)].map((match) => match[1] ?? ''),
    ];
    return new Set(labels.flatMap((label) => citationsIn(label).map(({ section }) => section)));
  };
  return { liaison: sectionsOf(text.slice(0, split)), orca: sectionsOf(text.slice(split)) };
}

describe('the repository stands alone', () => {
  const files = trackedFiles();

  it('points no reader at a folder beside the repository or at a path of a developer machine', () => {
    const offences = files.flatMap((file) =>
      linesOf(file).flatMap((line, index) =>
        forbiddenIn(line).map((why) => `${file}:${index + 1}: ${why}: ${line.trim().slice(0, 120)}`),
      ),
    );
    expect(offences).toEqual([]);
  });

  it('names only Markdown files the repository has, and its pages link only to what exists', () => {
    const offences = files.flatMap((file) =>
      linesOf(file).flatMap((line, index) =>
        [...missingMarkdown(file, line), ...brokenLinks(file, line)].map(
          (target) => `${file}:${index + 1}: ${target}`,
        ),
      ),
    );
    expect(offences).toEqual([]);
  });

  it('cites only sections of the reference designs that docs/reference.md summarises', () => {
    const known = referenceSections();
    expect(known.liaison.has('2.3') && known.orca.has('1.6')).toBe(true);
    const offences = files
      .filter((file) => file !== REFERENCE_DOC)
      .flatMap((file) =>
        linesOf(file).flatMap((line, index) =>
          citationsIn(line)
            .filter(({ section, orca }) => !known.orca.has(section) && (orca || !known.liaison.has(section)))
            .map(({ section, orca }) => `${file}:${index + 1}: ${orca ? 'orca ' : ''}§${section}`),
        ),
      );
    expect(offences).toEqual([]);
  });

  it('recognises each forbidden kind of path and lets legitimate ones through', () => {
    // Built from parts, so this file holds none of the paths it forbids.
    const samples = [
      ['see ..', 'shared', 'design', 'x.md'].join('/'),
      ['cd ', 'work', 'main'].join('/'),
      ['PATH=', 'tmp', 'node24', 'node_modules', 'node', 'bin'].join('/'),
      ['', 'var', 'folders', 'xy', 'T'].join('/'),
      ['', 'Users', 'dev'].join('/'),
      ['', 'home', 'jdoe', '.nvm'].join('/'),
      ['C:', 'Users', 'x'].join('\\'),
      ['seed `001', 'abc`'].join('_'),
      ['(ARCHITECT', 'URE invariant 2)'].join(''),
    ];
    for (const [index, sample] of samples.entries()) {
      expect([sample, FORBIDDEN[index]?.pattern.test(sample)]).toEqual([sample, true]);
    }
    const fine = [
      'join(homedir(), ".nvm")',
      "project: '/home/alice/project'",
      'os.tmpdir()',
      "const project = '/tmp';",
      'mountPath: /tmp',
      'ExecStart=/usr/bin/node /opt/tether/dist/main.js',
      'GET /api/v1/edge-agents/connectors',
      'https://example.com/work/tmp/x',
      'docs/architecture.md invariant 2',
    ];
    for (const sample of fine) expect([sample, forbiddenIn(sample)]).toEqual([sample, []]);
  });

  it('tells a citation of the reference from an RFC section, and Orca from liaison', () => {
    expect(citationsIn('(reference orca §3.3 step 2, §9.1)')).toEqual([
      { section: '3.3', orca: true },
      { section: '9.1', orca: true },
    ]);
    expect(citationsIn('[§2.3 discover]; RFC 6749 §3.3')).toEqual([{ section: '2.3', orca: false }]);
    expect(missingMarkdown('docs/x.md', ['see ', 'gone', '.md'].join(''))).toEqual(['gone.md']);
    expect(missingMarkdown('docs/x.md', 'see contract.md and README.md')).toEqual([]);
  });
});
