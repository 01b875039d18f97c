import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const APPS = ['api', 'session-router', 'history', 'edge-connector'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tools/**', 'prisma/generated/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // Type-aware rules: the project service finds each file's nearest tsconfig (the root one, or
  // apps/console's own for the browser code). prisma.config.ts sits outside every include and is
  // linted with a default project rather than widening the root tsconfig for one file.
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['prisma.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      '@typescript-eslint/require-await': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // `== null` stays: wire fields such as turn_timing are both optional and nullable.
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  // Plain JavaScript (config files, scripts) has no tsconfig; the typed rules need one.
  {
    files: ['**/*.{js,mjs,cjs}'],
    ...tseslint.configs.disableTypeChecked,
  },
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
  // Rooms a reader can hold: a file past 500 lines or a function past 80 is split along its seams
  // (specs are lists of cases and may run longer).
  {
    files: ['apps/**/*.{ts,tsx}', 'libs/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.spec-cases.ts', '**/*.spec-support.ts'],
    rules: {
      'max-lines': ['error', { max: 500 }],
      'max-lines-per-function': ['error', { max: 80 }],
    },
  },
  {
    files: ['**/*.spec.ts', '**/*.spec-support.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
