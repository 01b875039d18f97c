import { SessionTitle, validTitle } from './session-title.js';

describe('validTitle', () => {
  it('trims and refuses blank, control-character and over-long titles', () => {
    expect(validTitle('  Fix it ')).toBe('Fix it');
    expect(validTitle(undefined)).toBeUndefined();
    expect(validTitle('   ')).toBeUndefined();
    expect(validTitle('a\u0007b')).toBeUndefined();
    expect(validTitle('x'.repeat(121))).toBeUndefined();
  });
});

describe('SessionTitle', () => {
  it('prefers the user, then the agent, then the frozen title, then the first prompt', () => {
    const title = new SessionTitle();
    expect(title.shown(undefined)).toBe('');
    expect(title.shown('  first \n prompt ')).toBe('first prompt');
    title.freeze('Old');
    expect(title.shown('prompt')).toBe('Old');
    expect(title.setNative('Agent')).toBe(true);
    expect(title.setNative('Agent')).toBe(false);
    expect(title.shown('prompt')).toBe('Agent');
    title.rename('Mine');
    expect(title.shown('prompt')).toBe('Mine');
    // A new agent title is kept but hidden behind the rename.
    expect(title.setNative('Agent 2')).toBe(false);
    expect(title.shown('prompt')).toBe('Mine');
  });

  it('ignores an invalid agent title and cuts a long first prompt', () => {
    const title = new SessionTitle();
    expect(title.setNative(' ')).toBe(false);
    const shown = title.shown('word '.repeat(100));
    expect(shown.endsWith('…')).toBe(true);
    expect([...shown].length).toBeLessThan(100);
  });
});
