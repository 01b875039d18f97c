// Boots a real edge (scripted agent) against the shared NATS and drives directories, file
// transfers and attachments only through edge_agent_v1 requests, including the path-escape suite:
// every attempt fails with invalid_request or not_found and leaves no file behind.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  appendFileSync,
  linkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Limits,
  type AgentFileOperation,
  type EdgeAgentRequest,
  type EdgeAgentResult,
  type EdgeAgentRPCRequest,
} from '#contracts';
import { pollUntil } from '#test-support';
import { SCRIPTED_INSTALLATION } from '../../../apps/edge-connector/src/agent/scripted/index.js';
import { type RunningEdge } from '../../../apps/edge-connector/src/app.js';
import { AgentEdgeBus, type EdgeRequest } from '../../support/edge.js';

const EDGE_ID = '4343';
const ACTOR = '7';
const OTHER_ACTOR = '8';
const ACCESS = 'f'.repeat(32);
const OTHER_ACCESS = 'e'.repeat(32);
const CHUNK = Limits.FILE_CHUNK_MAX_BYTES;

const script = { rules: [{ steps: [{ type: 'reply', text: 'images={image_count}', deltas: 1 }] }] };

/** A 2×3 PNG header: the signature and an IHDR chunk are all the edge checks. */
function png(width = 2, height = 3): Buffer {
  const ihdr = Buffer.alloc(25);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write('IHDR', 4, 'latin1');
  ihdr.writeUInt32BE(width, 8);
  ihdr.writeUInt32BE(height, 12);
  ihdr.set([8, 6, 0, 0, 0], 16);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    ihdr,
    Buffer.alloc(16),
  ]);
}

/** Every file below `dir`, relative, symlinks included (not followed). */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

describe('edge files over NATS', () => {
  const bus = new AgentEdgeBus(EDGE_ID, 'edgefiles', ACCESS, ACTOR);
  let edge: RunningEdge;
  let base: string;
  let project: string;
  let outside: string;
  let dataDir: string;
  let session: string;

  beforeAll(async () => {
    await bus.open();
    base = realpathSync(mkdtempSync(join(tmpdir(), 'edge-files-')));
    project = join(base, 'project');
    outside = join(base, 'outside');
    dataDir = join(base, 'data');
    mkdirSync(project);
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), 'outside secret');
    const scriptPath = join(base, 'script.json');
    writeFileSync(scriptPath, JSON.stringify(script));
    edge = await bus.start(
      {
        TETHER_SCRIPTED_SCRIPT: scriptPath,
        TETHER_EDGE_DATA_DIR: dataDir,
      },
      30_000,
    );
    session = await start();
  });

  afterAll(async () => {
    await edge?.close();
    await bus.close();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  const rpc = (request: EdgeRequest, envelope: Partial<EdgeAgentRPCRequest> = {}) =>
    bus.rpc(request, envelope);

  async function start(access = ACCESS): Promise<string> {
    const started = await rpc(
      {
        action: 'start',
        installation_id: SCRIPTED_INSTALLATION.id,
        project,
        ...(access ? { access_id: access } : {}),
      },
      access ? { project_root: project } : {},
    );
    expect(started.status).toBe('ok');
    return started.session_id as string;
  }

  /** One file_* action on the main session as its owner, unless told otherwise. */
  const file = (
    action: EdgeAgentRequest['action'],
    op: AgentFileOperation,
    scope: { actor?: string; access?: string; session?: string; root?: string } = {},
  ): Promise<EdgeAgentResult> =>
    rpc(
      {
        action,
        session_id: scope.session ?? session,
        access_id: scope.access ?? ACCESS,
        file: op,
      },
      { actor_id: scope.actor ?? ACTOR, project_root: scope.root ?? project },
    );

  const attachmentsDir = (id = session): string => join(project, '.liaison-attachments', id);

  async function upload(name: string, data: Buffer): Promise<EdgeAgentResult> {
    const begun = await file('file_begin', { name, size: data.length });
    expect(begun).toMatchObject({ status: 'ok', transfer_id: expect.stringMatching(/^[0-9a-f]{32}$/) });
    const transfer = begun.transfer_id as string;
    for (let offset = 0; offset < data.length; offset += CHUNK) {
      const chunk = data.subarray(offset, offset + CHUNK);
      const written = await file('file_write', {
        transfer_id: transfer,
        offset,
        data: chunk.toString('base64'),
      });
      expect(written).toMatchObject({ status: 'ok', file_offset: offset + chunk.length });
    }
    return file('file_commit', { transfer_id: transfer });
  }

  async function download(path: string): Promise<Buffer> {
    let reply = await file('file_read', { path });
    expect(reply.status).toBe('ok');
    const parts = [Buffer.from(reply.file_data ?? '', 'base64')];
    while (!reply.file_done) {
      reply = await file('file_read', { transfer_id: reply.transfer_id, offset: reply.file_offset });
      expect(reply.status).toBe('ok');
      parts.push(Buffer.from(reply.file_data ?? '', 'base64'));
    }
    return Buffer.concat(parts);
  }

  describe('transfers', () => {
    it('uploads in chunks and reads the same bytes back', async () => {
      const data = Buffer.alloc(2 * CHUNK + 1234, 7);
      data.write('start', 0);
      const committed = await upload('data.bin', data);
      expect(committed.status).toBe('ok');
      const path = committed.file?.path as string;
      expect(committed.file).toMatchObject({ name: 'data.bin', size: data.length });
      expect(path).toMatch(new RegExp(`^\\.liaison-attachments/${session}/[0-9a-f]{32}-data\\.bin$`));
      expect(statSync(join(project, path)).mode & 0o777).toBe(0o600);
      expect(statSync(attachmentsDir()).mode & 0o777).toBe(0o700);
      expect((await download(path)).equals(data)).toBe(true);
      // No temp file is left next to the published one.
      expect(readdirSync(attachmentsDir()).some((name) => name.startsWith('.upload-'))).toBe(false);
    });

    it('gives the same name uploaded twice distinct paths, and takes an empty file', async () => {
      const first = await upload('twice.txt', Buffer.from('one'));
      const second = await upload('twice.txt', Buffer.from('two'));
      expect(first.file?.path).not.toEqual(second.file?.path);
      expect(readFileSync(join(project, first.file?.path as string), 'utf8')).toBe('one');
      expect(readFileSync(join(project, second.file?.path as string), 'utf8')).toBe('two');
      const empty = await upload('empty.txt', Buffer.alloc(0));
      expect(empty).toMatchObject({ status: 'ok', file: { name: 'empty.txt' } });
      expect(statSync(join(project, empty.file?.path as string)).size).toBe(0);
    });

    it('lists the session directory without upload temp files or symlinks, directories first', async () => {
      mkdirSync(join(project, 'listed'), { recursive: true });
      writeFileSync(join(project, 'listed', 'b.txt'), 'bb');
      mkdirSync(join(project, 'listed', 'sub'));
      writeFileSync(join(project, 'listed', '.upload-abc'), 'x');
      symlinkSync(join(outside, 'secret.txt'), join(project, 'listed', 'link.txt'));
      const listed = await file('file_list', { path: 'listed' });
      expect(listed).toMatchObject({
        status: 'ok',
        files: [
          { name: 'sub', path: 'listed/sub', directory: true },
          { name: 'b.txt', path: 'listed/b.txt', size: 2 },
        ],
      });
    });

    it('never publishes an incomplete upload, and a wrong offset ends the transfer', async () => {
      const before = tree(attachmentsDir());
      const begun = await file('file_begin', { name: 'partial.bin', size: 10 });
      const transfer = begun.transfer_id as string;
      await file('file_write', {
        transfer_id: transfer,
        offset: 0,
        data: Buffer.from('abc').toString('base64'),
      });
      expect((await file('file_commit', { transfer_id: transfer })).status).toBe('invalid_request');
      expect((await file('file_commit', { transfer_id: transfer })).status).toBe('not_found');

      const again = await file('file_begin', { name: 'offset.bin', size: 10 });
      const wrong = await file('file_write', {
        transfer_id: again.transfer_id,
        offset: 5,
        data: Buffer.from('abc').toString('base64'),
      });
      expect(wrong.status).toBe('invalid_request');
      const after = await file('file_write', {
        transfer_id: again.transfer_id,
        offset: 0,
        data: Buffer.from('abc').toString('base64'),
      });
      expect(after.status).toBe('not_found');
      expect(tree(attachmentsDir())).toEqual(before);
    });

    it('cancels a transfer and removes its temp file', async () => {
      const before = tree(attachmentsDir());
      const begun = await file('file_begin', { name: 'cancel.bin', size: 4 });
      expect(tree(attachmentsDir())).toHaveLength(before.length + 1);
      expect(await file('file_cancel', { transfer_id: begun.transfer_id })).toMatchObject({ status: 'ok' });
      expect(tree(attachmentsDir())).toEqual(before);
    });

    it('checks images: too large before anything, not an image before publishing, a png gets its type', async () => {
      const before = tree(attachmentsDir());
      const large = await file('file_begin', { name: 'big.png', size: Limits.IMAGE_MAX_BYTES + 1 });
      expect(large.status).toBe('invalid_request');
      const fake = await upload('fake.png', Buffer.from('this is not an image at all'));
      expect(fake.status).toBe('invalid_request');
      const huge = await upload('huge.png', png(10_000, 10_000));
      expect(huge.status).toBe('invalid_request');
      expect(tree(attachmentsDir())).toEqual(before);
      const good = await upload('pic.png', png());
      expect(good).toMatchObject({ status: 'ok', file: { name: 'pic.png', media_type: 'image/png' } });
    });

    it('allows at most 8 live transfers on the edge', async () => {
      const ids: string[] = [];
      for (let i = 0; i < Limits.FILE_TRANSFERS_MAX; i += 1) {
        const begun = await file('file_begin', { name: `n${i}.bin`, size: 1 });
        expect(begun.status).toBe('ok');
        ids.push(begun.transfer_id as string);
      }
      expect((await file('file_begin', { name: 'one-more.bin', size: 1 })).status).toBe('busy');
      for (const id of ids) await file('file_cancel', { transfer_id: id });
      expect((await file('file_begin', { name: 'now.bin', size: 0 })).status).toBe('ok');
    });
  });

  describe('scope', () => {
    it('answers not_found to another actor, access, session, project root, or a transient session', async () => {
      writeFileSync(join(project, 'scoped.txt'), 'scoped');
      const begun = await file('file_begin', { name: 'mine.bin', size: 3 });
      const write = {
        transfer_id: begun.transfer_id,
        offset: 0,
        data: Buffer.from('abc').toString('base64'),
      };
      expect((await file('file_write', write, { actor: OTHER_ACTOR })).status).toBe('not_found');
      expect((await file('file_list', {}, { actor: OTHER_ACTOR })).status).toBe('not_found');
      expect((await file('file_list', {}, { access: OTHER_ACCESS })).status).toBe('not_found');
      expect((await file('file_list', {}, { session: 'a'.repeat(32) })).status).toBe('not_found');
      expect((await file('file_read', { path: 'scoped.txt' }, { root: outside })).status).toBe('not_found');
      // A second session of the same owner cannot use the first one's transfer.
      const other = await start();
      expect((await file('file_write', write, { session: other })).status).toBe('not_found');
      await rpc({ action: 'stop', session_id: other, access_id: ACCESS });
      const transient = await start('');
      expect((await file('file_list', {}, { session: transient })).status).toBe('not_found');
      await rpc({ action: 'stop', session_id: transient });
      // The owner's transfer is intact after all of that.
      expect(await file('file_write', write)).toMatchObject({ status: 'ok', file_offset: 3 });
      await file('file_cancel', { transfer_id: begun.transfer_id });
    });
  });

  describe('path escapes', () => {
    beforeAll(() => {
      mkdirSync(join(project, 'escape'), { recursive: true });
      symlinkSync(outside, join(project, 'escape', 'dirlink'));
      symlinkSync(join(outside, 'secret.txt'), join(project, 'escape', 'filelink'));
    });

    const paths = [
      '../outside/secret.txt',
      'escape/../../outside/secret.txt',
      '/etc/passwd',
      'escape\\..\\..\\outside\\secret.txt',
      'escape/dirlink/secret.txt',
      'escape/filelink',
      'escape/dirlink',
      '.upload-0123',
      'escape/.upload-x/y',
      'escape//filelink',
      'a\0b',
    ];

    it.each(paths)('refuses to read or list %j', async (path) => {
      const outsideBefore = tree(outside);
      const projectBefore = tree(project);
      for (const action of ['file_read', 'file_list'] as const) {
        const reply = await file(action, { path });
        expect(['invalid_request', 'not_found']).toContain(reply.status);
        expect(reply.file_data).toBeUndefined();
        expect(reply.files).toBeUndefined();
      }
      expect(tree(outside)).toEqual(outsideBefore);
      expect(tree(project)).toEqual(projectBefore);
    });

    it('refuses uploads when the attachment directory is a symlink out of the root', async () => {
      const id = await start();
      mkdirSync(join(project, '.liaison-attachments'), { recursive: true });
      symlinkSync(outside, attachmentsDir(id));
      const outsideBefore = tree(outside);
      const begun = await file('file_begin', { name: 'x.txt', size: 1 }, { session: id });
      expect(['invalid_request', 'not_found']).toContain(begun.status);
      expect(tree(outside)).toEqual(outsideBefore);
      await rpc({ action: 'stop', session_id: id, access_id: ACCESS });
    });

    it('detects the attachment directory swapped for a symlink during an upload and leaves nothing', async () => {
      const id = await start();
      const begun = await file('file_begin', { name: 'swap.bin', size: 6 }, { session: id });
      const transfer = begun.transfer_id as string;
      const chunk = (offset: number) => ({
        transfer_id: transfer,
        offset,
        data: Buffer.from('abc').toString('base64'),
      });
      expect((await file('file_write', chunk(0), { session: id })).status).toBe('ok');
      const moved = join(project, 'moved-away');
      renameSync(attachmentsDir(id), moved);
      symlinkSync(outside, attachmentsDir(id));
      const outsideBefore = tree(outside);
      expect((await file('file_write', chunk(3), { session: id })).status).toBe('invalid_request');
      expect((await file('file_commit', { transfer_id: transfer }, { session: id })).status).toBe(
        'not_found',
      );
      expect(tree(outside)).toEqual(outsideBefore);
      expect(tree(moved)).toEqual([]);
      rmSync(moved, { recursive: true });
      await rpc({ action: 'stop', session_id: id, access_id: ACCESS });
    });

    it('refuses a file with more than one hard link, before and during a read', async () => {
      // A hard link planted in the project is the outside file itself: its path cannot tell.
      linkSync(join(outside, 'secret.txt'), join(project, 'escape', 'hardlink.txt'));
      const planted = await file('file_read', { path: 'escape/hardlink.txt' });
      expect(planted.status).toBe('invalid_request');
      expect(planted.file_data).toBeUndefined();
      rmSync(join(project, 'escape', 'hardlink.txt'));

      const path = join(project, 'read-linked.bin');
      writeFileSync(path, Buffer.alloc(CHUNK + 10, 1));
      const first = await file('file_read', { path: 'read-linked.bin' });
      expect(first).toMatchObject({ status: 'ok', file_offset: CHUNK });
      linkSync(path, join(outside, 'linked-later.bin'));
      const next = await file('file_read', { transfer_id: first.transfer_id, offset: CHUNK });
      expect(next.status).toBe('invalid_request');
      expect(next.file_data).toBeUndefined();
      rmSync(join(outside, 'linked-later.bin'));
    });

    it('detects a file swapped for a symlink, replaced, or changed during a read', async () => {
      const big = Buffer.alloc(CHUNK + 10, 1);
      const cases: [string, (path: string) => void][] = [
        ['symlink', (path) => (rmSync(path), symlinkSync(join(outside, 'secret.txt'), path))],
        ['replaced', (path) => (writeFileSync(`${path}.new`, big), renameSync(`${path}.new`, path))],
        ['appended', (path) => appendFileSync(path, 'more')],
      ];
      for (const [name, change] of cases) {
        const path = join(project, `read-${name}.bin`);
        writeFileSync(path, big);
        const first = await file('file_read', { path: `read-${name}.bin` });
        expect(first).toMatchObject({ status: 'ok', file_offset: CHUNK });
        expect(first.file_done).toBeFalsy();
        change(path);
        const next = await file('file_read', { transfer_id: first.transfer_id, offset: CHUNK });
        expect(next.status).toBe('invalid_request');
        expect(next.file_data).toBeUndefined();
        // The transfer is gone.
        const after = await file('file_read', { transfer_id: first.transfer_id, offset: CHUNK });
        expect(after.status).toBe('not_found');
      }
    });
  });

  describe('directories', () => {
    const dirs = (directory?: string) =>
      rpc({ action: 'directories', ...(directory ? { directory } : {}) }, { project_root: project });

    it('lists only real directories inside the roots, with a parent inside the root', async () => {
      const browse = join(project, 'browse');
      mkdirSync(join(browse, 'b-dir'), { recursive: true });
      mkdirSync(join(browse, 'a-dir'));
      mkdirSync(join(browse, '.hidden'));
      writeFileSync(join(browse, 'file.txt'), 'x');
      symlinkSync(outside, join(browse, 'c-link'));
      const listed = await dirs(browse);
      expect(listed).toMatchObject({
        status: 'ok',
        directory: browse,
        parent_directory: project,
        directories: [
          { name: 'a-dir', path: join(browse, 'a-dir') },
          { name: 'b-dir', path: join(browse, 'b-dir') },
        ],
      });
      expect(listed.directory_roots).toContain(project);
      expect(listed.directory_roots).not.toContain('/');
      const root = await dirs(project);
      expect(root.status).toBe('ok');
      // The project is a root (unless it is inside home): no parent above a root.
      if (!project.startsWith(`${realpathSync(listed.directory_roots?.[0] as string)}/`))
        expect(root.parent_directory).toBeUndefined();
      const first = await dirs();
      expect(first.directory).toBe(listed.directory_roots?.[0]);
    });

    it('refuses relative paths, paths outside the roots and symlink escapes', async () => {
      for (const directory of [
        'relative/path',
        outside,
        join(project, 'browse', 'c-link'),
        join(project, 'missing'),
      ]) {
        expect((await dirs(directory)).status).toBe('invalid_request');
      }
    });

    it('returns at most 200 directories and says it truncated', async () => {
      const many = join(project, 'many');
      for (let i = 0; i < Limits.DIRECTORIES_RETURNED_MAX + 5; i += 1) {
        mkdirSync(join(many, `d${String(i).padStart(3, '0')}`), { recursive: true });
      }
      const listed = await dirs(many);
      expect(listed.directories).toHaveLength(Limits.DIRECTORIES_RETURNED_MAX);
      expect(listed.truncated).toBe(true);
      expect(listed.directories?.[0]?.name).toBe('d000');
    });
  });

  describe('attachments on send', () => {
    const untilIdle = async (id: string): Promise<EdgeAgentResult> => {
      let snapshot = await rpc({ action: 'poll', session_id: id, access_id: ACCESS });
      for (let i = 0; i < 100 && snapshot.running; i += 1) {
        snapshot = await rpc({
          action: 'watch',
          session_id: id,
          access_id: ACCESS,
          cursor: String(snapshot.revision),
        });
      }
      return snapshot;
    };
    const snapshots = (id: string): string[] => {
      const dir = join(dataDir, 'attachment-snapshots', id);
      return existsSync(dir) ? tree(dir) : [];
    };

    it('hands images to the agent as private snapshots and keeps the metadata on the message', async () => {
      const id = await start();
      const image = await upload2(id, 'shot.png', png());
      const notes = await upload2(id, 'notes.txt', Buffer.from('notes'));
      const sent = await rpc({
        action: 'send',
        session_id: id,
        access_id: ACCESS,
        text: 'look',
        attachments: [image, notes],
      });
      expect(sent.status).toBe('ok');
      const done = await untilIdle(id);
      expect(done.messages).toEqual([
        {
          role: 'user',
          text: 'look',
          attachments: [
            { name: 'shot.png', path: image, size: png().length, media_type: 'image/png' },
            { name: 'notes.txt', path: notes, size: 5 },
          ],
        },
        { role: 'assistant', text: 'images=1' },
      ]);
      expect(snapshots(id)).toHaveLength(2); // the turn's directory and its one image
      // The next turn drops the previous snapshots; closing drops the rest.
      await rpc({ action: 'send', session_id: id, access_id: ACCESS, text: 'again' });
      await untilIdle(id);
      expect(snapshots(id)).toEqual([]);
      await rpc({ action: 'send', session_id: id, access_id: ACCESS, attachments: [image] });
      expect((await untilIdle(id)).messages?.at(-1)).toEqual({ role: 'assistant', text: 'images=1' });
      expect(snapshots(id)).toHaveLength(2);
      await rpc({ action: 'stop', session_id: id, access_id: ACCESS });
      const dropped = () => snapshots(id).length === 0;
      expect(await pollUntil(dropped, (done) => done, { timeoutMs: 5_000, intervalMs: 25 })).toBe(true);
    });

    it('refuses attachments that are not this session uploads', async () => {
      const id = await start();
      writeFileSync(join(project, 'plain.txt'), 'plain');
      const foreign = `.liaison-attachments/${session}/${readdirSync(attachmentsDir())[0] as string}`;
      for (const path of [
        'plain.txt',
        foreign,
        `.liaison-attachments/${id}/../../plain.txt`,
        `.liaison-attachments/${id}/missing`,
      ]) {
        const sent = await rpc({
          action: 'send',
          session_id: id,
          access_id: ACCESS,
          text: 'x',
          attachments: [path],
        });
        expect(sent.status).toBe('invalid_request');
      }
      expect((await rpc({ action: 'poll', session_id: id, access_id: ACCESS })).messages ?? []).toEqual([]);
      await rpc({ action: 'stop', session_id: id, access_id: ACCESS });
    });

    it('refuses an attachment hard-linked to a file outside the project', async () => {
      const id = await start();
      const notes = await upload2(id, 'notes.txt', Buffer.from('notes'));
      // The upload replaced by a hard link to the outside secret under the same name.
      rmSync(join(project, notes));
      linkSync(join(outside, 'secret.txt'), join(project, notes));
      const sent = await rpc({
        action: 'send',
        session_id: id,
        access_id: ACCESS,
        text: 'x',
        attachments: [notes],
      });
      expect(sent.status).toBe('invalid_request');
      expect((await rpc({ action: 'poll', session_id: id, access_id: ACCESS })).messages ?? []).toEqual([]);
      rmSync(join(project, notes));
      await rpc({ action: 'stop', session_id: id, access_id: ACCESS });
    });

    async function upload2(id: string, name: string, data: Buffer): Promise<string> {
      const begun = await file('file_begin', { name, size: data.length }, { session: id });
      if (data.length > 0) {
        await file(
          'file_write',
          { transfer_id: begun.transfer_id, offset: 0, data: data.toString('base64') },
          { session: id },
        );
      }
      const committed = await file('file_commit', { transfer_id: begun.transfer_id }, { session: id });
      expect(committed.status).toBe('ok');
      return committed.file?.path as string;
    }
  });
});
