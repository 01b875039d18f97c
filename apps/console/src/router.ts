// Hash routes: the page is one file at any path prefix, so the address after `#` is the route and
// the server never needs to know the console's pages.
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'connectors' }
  | { page: 'accesses' }
  | { page: 'sessions'; accessId?: string; page_no: number }
  | { page: 'session'; edgeId: string; accessId: string; sessionId: string }
  | { page: 'not-found' };

const ID = '[A-Za-z0-9_-]{1,64}';

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '') || '/';
  if (path === '/' || path === '/connectors') return { page: 'connectors' };
  if (path === '/accesses') return { page: 'accesses' };
  let match = new RegExp(`^/sessions(?:/(${ID}))?(?:\\?page=(\\d{1,6}))?$`).exec(path);
  if (match) return { page: 'sessions', accessId: match[1], page_no: Math.max(1, Number(match[2] ?? 1)) };
  match = new RegExp(`^/s/(\\d{1,20})/(${ID})/(${ID})$`).exec(path);
  if (match) return { page: 'session', edgeId: match[1]!, accessId: match[2]!, sessionId: match[3]! };
  return { page: 'not-found' };
}

export function sessionHref(edgeId: string, accessId: string, sessionId: string): string {
  return `#/s/${edgeId}/${accessId}/${sessionId}`;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
