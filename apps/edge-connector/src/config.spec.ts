import { loadEdgeConfig } from './config.js';

const BASE = { TETHER_EDGE_ID: '12', TETHER_EDGE_TOKEN: 't', TETHER_EDGE_DATA_DIR: '/data/edge' };

describe('edge configuration of ACP agents', () => {
  it('defaults the private agent homes under the data directory and keeps spares on', () => {
    const config = loadEdgeConfig({ ...BASE, TETHER_AGENT: 'acp' });
    expect(config.agents).toEqual(['acp']);
    expect(config.acp).toEqual({
      homesDir: '/data/edge/agent-homes',
      envAllowList: [],
      declared: [],
      spares: true,
      geminiPath: undefined,
    });
  });

  it('reads declared agents from JSON', () => {
    const agents = [{ name: 'mine', command: '/opt/mine/agent', args: ['--acp'], env: ['MINE_KEY'] }];
    const config = loadEdgeConfig({
      ...BASE,
      TETHER_ACP_AGENTS: JSON.stringify(agents),
      TETHER_ACP_SPARES: 'false',
    });
    expect(config.acp.declared).toEqual(agents);
    expect(config.acp.spares).toBe(false);
  });

  it.each([
    ['not JSON', '[{'],
    ['a relative command', JSON.stringify([{ name: 'x', command: 'agent' }])],
    ['an unknown field', JSON.stringify([{ name: 'x', command: '/a', shell: true }])],
    ['a bad environment name', JSON.stringify([{ name: 'x', command: '/a', env: ['A=B'] }])],
  ])('refuses %s in TETHER_ACP_AGENTS', (_what, value) => {
    expect(() => loadEdgeConfig({ ...BASE, TETHER_ACP_AGENTS: value })).toThrow();
  });
});
