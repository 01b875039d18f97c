import { render } from 'preact';
import { App } from './app.js';
import { completeOidc, type ConsoleConfig } from './auth.js';
import './styles.css';

async function boot(): Promise<void> {
  const root = document.getElementById('app');
  if (!root) return;
  let config: ConsoleConfig;
  try {
    const response = await fetch(new URL('api/v1/console/config', document.baseURI));
    if (!response.ok) throw new Error(String(response.status));
    config = ((await response.json()) as { data: ConsoleConfig }).data;
  } catch {
    root.textContent = 'The Tether api cannot be reached. Reload to try again.';
    return;
  }
  let signInError: string | null = null;
  try {
    await completeOidc(config.oidc);
  } catch (error) {
    signInError = (error as Error).message;
  }
  root.textContent = '';
  render(<App config={config} signInError={signInError} />, root);
}

void boot();
