import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EdgeAgentRequest, EdgeAgentResult } from '#contracts';
import { ATTACHMENT_NOTE, promptWithAttachments } from './attachments.js';
import { clientPath } from './confined-dir.js';
import type { Transfers } from './transfers.js';
import { FilesService, type FileSession } from './files.service.js';
import { imageFormat, isImageName } from './images.js';

const OWNER = '7';
const ACCESS = 'a'.repeat(32);
const IDLE_MS = 50;

function pngHeader(width: number, height: number): Buffer {
  const data = Buffer.alloc(33);
  data.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  data.writeUInt32BE(13, 8);
  data.write('IHDR', 12, 'latin1');
  data.writeUInt32BE(width, 16);
  data.writeUInt32BE(height, 20);
  return data;
}

describe('file path rules', () => {
  it.each([
    '../x',
    'a/../b',
    '/etc/passwd',
    'a\\b',
    'a\0b',
    '.upload-1',
    'a/.upload-x',
    'a//b',
    './a',
    'a/\x07',
  ])('refuses %j', (path) =>
    expect(() => clientPath(path)).toThrow(expect.objectContaining({ status: 'invalid_request' })),
  );

  it('splits a relative path and treats empty and . as the root', () => {
    expect(clientPath('src/app.ts')).toEqual(['src', 'app.ts']);
    expect(clientPath('')).toEqual([]);
    expect(clientPath('.')).toEqual([]);
    expect(clientPath('.liaison-attachments/x')).toEqual(['.liaison-attachments', 'x']);
  });
});

describe('image headers', () => {
  it('knows image names by extension, case-insensitively', () => {
    expect(['a.png', 'b.JPG', 'c.jpeg', 'd.gif'].every(isImageName)).toBe(true);
    expect(['a.txt', 'png', 'a.png.txt', 'a.webp'].some(isImageName)).toBe(false);
  });

  it('accepts png, gif and jpeg headers within the pixel bound', () => {
    expect(imageFormat(pngHeader(100, 100))).toBe('png');
    const gif = Buffer.from('GIF89a\x10\x00\x20\x00rest', 'latin1');
    expect(imageFormat(gif)).toBe('gif');
    // SOI, an APP0 segment, then SOF0 with height 48 and width 64.
    const jpeg = Buffer.from([
      0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x30, 0x00, 0x40,
      0x03,
    ]);
    expect(imageFormat(jpeg)).toBe('jpeg');
  });

  it('refuses other data, zero sizes and more than 40 M pixels', () => {
    expect(imageFormat(Buffer.from('hello world, not an image'))).toBeUndefined();
    expect(imageFormat(pngHeader(0, 10))).toBeUndefined();
    expect(imageFormat(pngHeader(10_000, 4_001))).toBeUndefined();
    expect(imageFormat(Buffer.from([0xff, 0xd8, 0xff, 0xd9]))).toBeUndefined();
  });
});

describe('attachment prompt note', () => {
  it('appends the note and a JSON array of absolute paths', () => {
    const prompt = promptWithAttachments('look', ['/p/a "b".txt']);
    expect(prompt).toBe(`look\n\n${ATTACHMENT_NOTE}:\n["/p/a \\"b\\".txt"]`);
    expect(promptWithAttachments('  ', ['/p/x'])).toBe(`${ATTACHMENT_NOTE}:\n["/p/x"]`);
    expect(promptWithAttachments('plain', [])).toBe('plain');
  });
});

describe('FilesService transfers', () => {
  let base: string;
  let service: FilesService;
  let session: FileSession;

  beforeEach(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'files-spec-')));
    mkdirSync(join(base, 'project'));
    service = new FilesService({ homeDir: base, dataDir: join(base, 'data'), transferIdleMs: IDLE_MS });
    session = {
      id: 'b'.repeat(32),
      owner: OWNER,
      access: ACCESS,
      cwd: join(base, 'project'),
      projectRoot: join(base, 'project'),
    };
  });
  afterEach(async () => {
    await service.onModuleDestroy();
    rmSync(base, { recursive: true, force: true });
  });

  const call = (
    action: EdgeAgentRequest['action'],
    file: EdgeAgentRequest['file'],
  ): Promise<EdgeAgentResult> =>
    service.handle(
      {
        version: 1,
        actor_id: OWNER,
        project_root: session.projectRoot,
        request: { edge_id: '1', action, session_id: session.id, access_id: ACCESS, file },
      },
      session,
    );

  it('expires an idle incomplete upload and removes its temp file, never publishing it', async () => {
    const begun = await call('file_begin', { name: 'slow.bin', size: 10 });
    await call('file_write', {
      transfer_id: begun.transfer_id,
      offset: 0,
      data: Buffer.from('abc').toString('base64'),
    });
    const dir = join(session.cwd, '.liaison-attachments', session.id);
    expect(readdirSync(dir)).toHaveLength(1);
    // The slot is freed at once; the temp file goes a moment later (an async unlink): wait for both.
    for (let i = 0; i < 100 && (service.liveTransfers > 0 || readdirSync(dir).length > 0); i += 1) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(service.liveTransfers).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
    await expect(call('file_commit', { transfer_id: begun.transfer_id })).rejects.toMatchObject({
      status: 'not_found',
    });
  });

  it('answers busy to a second RPC on a transfer in use', async () => {
    const begun = await call('file_begin', { name: 'x.bin', size: 2 });
    const write = { transfer_id: begun.transfer_id, offset: 0, data: Buffer.from('a').toString('base64') };
    // Hold the transfer the way an RPC in flight does (two racing calls could finish one after the
    // other on a fast machine and prove nothing), then a second RPC must be told busy.
    const transfers = (service as unknown as { transfers: Transfers }).transfers;
    const held = transfers.take(begun.transfer_id!, { owner: OWNER, access: ACCESS, sessionId: session.id });
    await expect(call('file_write', write)).rejects.toMatchObject({ status: 'busy' });
    transfers.release(held);
    await expect(call('file_write', write)).resolves.toMatchObject({ file_offset: 1 });
  });

  it('ends a session transfers when the session closes', async () => {
    await call('file_begin', { name: 'x.bin', size: 2 });
    expect(service.liveTransfers).toBe(1);
    await service.sessionClosed(session.id);
    expect(service.liveTransfers).toBe(0);
    expect(readdirSync(join(session.cwd, '.liaison-attachments', session.id))).toEqual([]);
  });
});
