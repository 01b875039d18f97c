import { Limits } from '#contracts';
import { TranscriptWindow } from './transcript-window.js';

describe('TranscriptWindow', () => {
  it('streams reply items into their own messages', () => {
    const transcript = new TranscriptWindow(true);
    transcript.beginTurn('hi');
    transcript.appendReply('a', 'one');
    transcript.appendReply('a', ' more');
    transcript.appendReply('b', 'two');
    expect(transcript.views()).toEqual([
      { role: 'user', text: 'hi' },
      { role: 'assistant', text: 'one more' },
      { role: 'assistant', text: 'two' },
    ]);
    expect(transcript.firstPrompt()).toBe('hi');
    expect(transcript.truncated).toBe(false);
  });

  it('drops the oldest messages past the count bound and keeps activities pointing at theirs', () => {
    const transcript = new TranscriptWindow(true);
    for (let i = 0; i < Limits.MESSAGES_MAX / 2 - 1; i += 1) transcript.beginTurn(`p${i}`);
    transcript.activities.apply({ nativeId: 'cmd', kind: 'commandExecution', status: 'running' });
    const before = transcript.activities.views()[0]?.message_index as number;
    transcript.beginTurn('next');
    transcript.beginTurn('last');
    expect(transcript.messageCount).toBe(Limits.MESSAGES_MAX);
    expect(transcript.truncated).toBe(true);
    expect(transcript.activities.views()[0]?.message_index).toBe(before - 2);
  });

  it('rolls over to an empty next window', () => {
    const transcript = new TranscriptWindow(true);
    transcript.restore(3, true, [{ role: 'user', text: 'old', attachments: [] }]);
    expect(transcript.isEmpty).toBe(false);
    transcript.rollOver();
    expect(transcript.window).toBe(4);
    expect(transcript.truncated).toBe(false);
    expect(transcript.isEmpty).toBe(true);
  });
});

describe('ActivityLog', () => {
  it('shows details to saved sessions only and never reopens a finished activity', () => {
    for (const saved of [true, false]) {
      const transcript = new TranscriptWindow(saved);
      const log = transcript.activities;
      log.apply({ nativeId: 'c', kind: 'commandExecution', status: 'completed', command: 'ls', exitCode: 0 });
      expect(log.apply({ nativeId: 'c', kind: 'commandExecution', status: 'running' })).toBe(false);
      const [view] = log.views();
      expect(view?.status).toBe('completed');
      expect(view?.command).toBe(saved ? 'ls' : undefined);
    }
  });

  it('drops unknown kinds and answers inputs on their userInput activity', () => {
    const log = new TranscriptWindow(true).activities;
    expect(log.apply({ nativeId: 'm', kind: 'agentMessage', status: 'running' })).toBe(false);
    log.inputAsked('i', 'Go?');
    log.inputAnswered('i', 'Go? → yes');
    expect(log.views()).toMatchObject([{ kind: 'userInput', status: 'completed', output: 'Go? → yes' }]);
  });

  it('offers file changes for approval only while every diff is shown in full', () => {
    const log = new TranscriptWindow(true).activities;
    const changes = [{ path: 'a', kind: 'update', diff: '+a' }];
    log.apply({ nativeId: 'f', kind: 'fileChange', status: 'running', changes });
    expect(log.completeChanges('f')).toEqual([{ path: 'a', kind: 'update', diff: '+a' }]);
    log.apply({
      nativeId: 'g',
      kind: 'fileChange',
      status: 'running',
      changes: [{ path: 'b', kind: 'add' }],
    });
    expect(log.completeChanges('g')).toBeUndefined();
    log.endRunning();
    expect(log.completeChanges('f')).toBeUndefined();
  });
});
