// Summarizes V8 CPU profiles (`node --cpu-prof`) written by the services of a run: the functions
// with the most self time, and the same time grouped by where the code lives (app, lib, package).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixed, table } from './lib/stats.js';

/** Rows shown per service. */
const TOP_FUNCTIONS = 20;
const TOP_PLACES = 12;

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileEntry {
  name: string;
  where: string;
  self_ms: number;
  share: number;
}
export interface ProfileSummary {
  service: string;
  file: string;
  busy_ms: number;
  functions: ProfileEntry[];
  places: ProfileEntry[];
  table: string;
}

/** Pseudo-frames that are not work of the process. */
const IDLE = new Set(['(idle)', '(program)']);

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + '/dist/'.length);
  return url.replace(/^file:\/\//, '');
}

/** Where code lives: an npm package, one of our apps/libs, node itself, or the engine. */
function placeOf(url: string): string {
  if (!url) return '(native / engine)';
  if (url.startsWith('node:')) return 'node core';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const parts = url.slice(modules + 'node_modules/'.length).split('/');
    return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? url);
  }
  const short = shortUrl(url).split('/');
  return short.slice(0, short[0] === 'apps' || short[0] === 'libs' ? 3 : 2).join('/');
}

export function summarizeProfile(
  service: string,
  file: string,
  profile: CpuProfile,
  skipFirstMs = 0,
): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  // Boot (module loading, Nest wiring) is not the hot path: drop the samples before the load.
  let elapsedUs = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    elapsedUs += delta;
    if (elapsedUs >= skipFirstMs * 1000) selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  });
  const functions = new Map<string, ProfileEntry>();
  const places = new Map<string, ProfileEntry>();
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame || IDLE.has(frame.functionName)) continue;
    busyUs += us;
    const where = frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : '';
    const name = frame.functionName || '(anonymous)';
    const key = `${name}@${where}`;
    const entry = functions.get(key) ?? { name, where, self_ms: 0, share: 0 };
    entry.self_ms += us / 1000;
    functions.set(key, entry);
    const place = placeOf(frame.url);
    const group = places.get(place) ?? { name: place, where: '', self_ms: 0, share: 0 };
    group.self_ms += us / 1000;
    places.set(place, group);
  }
  const rank = (entries: Map<string, ProfileEntry>, top: number) =>
    [...entries.values()]
      .map((entry) => ({
        ...entry,
        self_ms: Math.round(entry.self_ms),
        share: busyUs ? entry.self_ms / (busyUs / 1000) : 0,
      }))
      .sort((a, b) => b.self_ms - a.self_ms)
      .slice(0, top);
  const topFunctions = rank(functions, TOP_FUNCTIONS);
  const topPlaces = rank(places, TOP_PLACES);
  const rendered =
    table(
      ['self ms', '% busy', 'function', 'where'],
      topFunctions.map((entry) => [entry.self_ms, fixed(entry.share * 100, 1), entry.name, entry.where]),
    ) +
    '\n\n' +
    table(
      ['self ms', '% busy', 'code'],
      topPlaces.map((entry) => [entry.self_ms, fixed(entry.share * 100, 1), entry.name]),
    );
  return {
    service,
    file,
    busy_ms: Math.round(busyUs / 1000),
    functions: topFunctions,
    places: topPlaces,
    table: rendered,
  };
}

/** Every profile in `dir`, named after the service whose pid wrote it (CPU.<date>.<time>.<pid>.…). */
export function summarizeProfiles(
  dir: string,
  pids: Record<string, number | undefined>,
  skipFirstMs = 0,
): ProfileSummary[] {
  const services = new Map(Object.entries(pids).map(([name, pid]) => [String(pid), name]));
  let files: string[];
  try {
    files = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'));
  } catch {
    return [];
  }
  return files.flatMap((file) => {
    const service = services.get(file.split('.')[3] ?? '');
    if (!service || (service !== 'api' && service !== 'router')) return [];
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    return [summarizeProfile(service, join(dir, file), profile, skipFirstMs)];
  });
}
