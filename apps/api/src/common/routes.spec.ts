import { allowedMethods, isEdgeAgentsPath, isGuardedPath } from './routes.js';

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

  it('knows which paths authenticate every call, so the request rate applies to them only', () => {
    expect(isGuardedPath('/api/v1/edge-agents')).toBe(true);
    expect(isGuardedPath('/api/v1/edge-agents?x=1')).toBe(true);
    expect(isGuardedPath('/api/v1/edge-agents/connectors/c1/credentials')).toBe(true);
    expect(isGuardedPath('/api/v1/agent-accesses/a1')).toBe(true);
    expect(isGuardedPath('/api/v1/sessions/s1/events?cursor=1')).toBe(true);
    expect(isGuardedPath('/api/v1/openapi.json')).toBe(false);
    expect(isGuardedPath('/api/v1/docs')).toBe(false);
    expect(isGuardedPath('/api/v1/console/dev-token')).toBe(false);
    expect(isGuardedPath('/api/v1/sessionsX')).toBe(false);
    expect(isGuardedPath('/assets/app.js')).toBe(false);
  });
});
