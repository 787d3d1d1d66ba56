// One lint configuration for the whole tree. Formatting is Prettier's (eslint-config-prettier turns
// off the rules it owns); the length rules keep functions and lines readable.
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import layers from './scripts/eslint-layers.mjs';

export default tseslint.config(
  { ignores: ['dist/', 'examples/dist/', 'docs/api/', 'node_modules/', 'test-artifacts/', 'coverage/', '**/*.d.ts'] },
  ...tseslint.configs.recommended,
  prettier,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Strings, URLs and regular expressions may run long: breaking them would hurt grep.
      'max-len': ['error', { code: 160, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true }],
    },
  },
  {
    files: ['lib/**/*.ts', 'console-page/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    // The layers of lib/: no import runs from a lower layer up.
    files: ['lib/**/*.ts'],
    plugins: { layers },
    rules: { 'layers/imports': 'error' },
  },
  {
    // Plain CommonJS scripts, benchmarks and browser-free fixtures.
    files: ['**/*.js', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
