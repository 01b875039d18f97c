import { allowedMethods, isEdgeAgentsPath } from './routes.js';

describe('route table', () => {
  it('knows the methods of each public path, ignoring the query', () => {
    expect(allowedMethods('/api/v1/edge-agents')).toEqual(['POST']);
    expect(allowedMethods('/api/v1/edge-agents/connectors?x=1')).toEqual(['GET', 'HEAD', 'POST']);
    expect(allowedMethods('/api/v1/agent-accesses/abc')).toEqual(['PUT', 'DELETE']);
    expect(allowedMethods('/api/v1/agent-accesses/abc/def')).toBeNull();
    expect(allowedMethods('/api/v1/edge-agents/')).toBeNull();
  });

  it('recognises the edge action path only', () => {
    expect(isEdgeAgentsPath('/api/v1/edge-agents?x')).toBe(true);
    expect(isEdgeAgentsPath('/api/v1/edge-agents/connectors')).toBe(false);
  });
});
