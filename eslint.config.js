import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const APPS = ['api', 'session-router', 'history', 'edge-connector'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tools/**', 'prisma/generated/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: Object.fromEntries(
        [
          'process',
          'console',
          'Buffer',
          'URL',
          'URLSearchParams',
          'TextEncoder',
          'TextDecoder',
          'setTimeout',
          'clearTimeout',
          'setInterval',
          'clearInterval',
          'setImmediate',
          'clearImmediate',
          'fetch',
          'Headers',
          'Response',
          'Request',
          'AbortController',
          'AbortSignal',
          'WebAssembly',
          'queueMicrotask',
          'structuredClone',
          'performance',
          'NodeJS',
          'globalThis',
        ].map((name) => [name, 'readonly']),
      ),
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': 'off',
    },
  },
  // No app imports another app: libs/contracts is the only shared surface between services.
  ...APPS.map((app) => ({
    files: [`apps/${app}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: APPS.filter((other) => other !== app).map((other) => ({
            group: [`**/apps/${other}/**`, `**/${other}/src/**`],
            message: 'Apps never import each other; share through libs/contracts.',
          })),
        },
      ],
    },
  })),
  // The console runs in the browser: its globals, and it reaches the api over HTTP only (wire types
  // come from libs/contracts as type imports; limits as constants).
  {
    files: ['apps/console/src/**/*.{ts,tsx}'],
    languageOptions: {
      globals: Object.fromEntries(
        [
          'window',
          'document',
          'location',
          'history',
          'sessionStorage',
          'crypto',
          'btoa',
          'atob',
          'Blob',
          'File',
          'HTMLElement',
          'HTMLDivElement',
          'Event',
          'PerformanceObserver',
          'addEventListener',
          'removeEventListener',
          'confirm',
          'prompt',
          'ReadableStream',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
  {
    files: ['**/*.spec.ts', '**/*.spec-support.ts', 'test/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
