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
  {
    files: ['**/*.spec.ts', 'test/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
