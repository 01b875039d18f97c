export { ScriptedDriver, SCRIPTED_INSTALLATION, SCRIPTED_KIND } from './scripted-driver.js';
export { DEFAULT_SCRIPT, ScriptError, loadScript, parseScript, scriptSchema } from './script.js';
export type { Script, ScriptRule, ScriptStep } from './script.js';
