import { basename, dirname } from 'node:path';

/**
 * The default `service.name`: `tether-<app>` from the entry script's path
 * (`dist/apps/<app>/src/main.js`), so each app is named without configuration.
 */
export function defaultServiceName(entry: string | undefined): string {
  if (!entry) return 'tether';
  const parts = entry.split(/[\\/]/);
  const apps = parts.lastIndexOf('apps');
  if (apps >= 0 && parts[apps + 1]) return `tether-${parts[apps + 1]}`;
  return `tether-${basename(dirname(entry))}`;
}
