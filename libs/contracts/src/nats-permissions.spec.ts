import { readFileSync } from 'node:fs';
import {
  edgePermissions,
  permissionsMarkdown,
  SERVICE_IDENTITIES,
  servicePermissions,
  type NatsPermissions,
} from './nats-permissions.js';
import { Subjects } from './subjects.js';

// docs/security.md shows every identity's permissions for the default namespace; they must be
// exactly what the code grants.
const doc = readFileSync('docs/security.md', 'utf8');
const subjects = new Subjects();

function documented(identity: string): string {
  const match = new RegExp(
    `<!-- permissions:${identity} -->([\\s\\S]*?)<!-- /permissions:${identity} -->`,
  ).exec(doc);
  if (!match?.[1]) throw new Error(`docs/security.md has no permissions block for ${identity}.`);
  return match[1].trim();
}

describe('NATS permissions', () => {
  it.each(SERVICE_IDENTITIES)('docs/security.md lists what the code grants %s', (identity) => {
    expect(documented(identity)).toBe(permissionsMarkdown(servicePermissions(subjects, identity)));
  });

  it('docs/security.md lists what the code grants an edge', () => {
    expect(documented('edge')).toBe(permissionsMarkdown(edgePermissions(subjects, '<edge-id>')));
  });

  const everything = (permissions: NatsPermissions) => [
    ...permissions.publish.allow,
    ...permissions.subscribe.allow,
  ];

  it('holds an edge to its own subjects', () => {
    const own = everything(edgePermissions(subjects, '7'));
    expect(own.every((subject) => subject.includes('.7.') || subject.endsWith('.7'))).toBe(true);
    expect(
      own.some(
        (subject) =>
          subject.includes('*') || (subject.includes('>') && !subject.startsWith('_INBOX.tether.edge.7.')),
      ),
    ).toBe(false);
  });

  it('gives no identity the journal but the router (writer) and history (its durable)', () => {
    for (const identity of ['api', 'subscriber'] as const) {
      const granted = everything(servicePermissions(subjects, identity));
      expect(
        granted.filter((subject) => subject.endsWith('.journal') || subject.includes('.journal.')),
      ).toEqual([]);
      expect(granted).not.toContain('_INBOX.>');
    }
  });
});
