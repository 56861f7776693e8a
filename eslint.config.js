import js from "@eslint/js";
import nextPlugin from "@next/eslint-plugin-next";
import prettier from "eslint-config-prettier";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      ".next/",
      ".lab/",
      "next-env.d.ts",
      "bench/results/",
      "bench/next-min/.next/",
      "bench/next-bare/.next/",
      "test-results/",
      "playwright-report/",
      "**/dist/",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["components/**/*.{ts,tsx}", "app/**/*.{ts,tsx}"],
    plugins: { "react-hooks": reactHooks, "@next/next": nextPlugin },
    rules: {
      ...reactHooks.configs.recommended.rules,
      ...nextPlugin.configs.recommended.rules,
      ...nextPlugin.configs["core-web-vitals"].rules,
    },
  },
  {
    // Tests read loosely typed JSON answers from the app on purpose.
    files: ["test/**/*.ts", "e2e/**/*.ts", "bench/**/*.ts", "lib/**/*.test.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  prettier,
  {
    // After prettier's config, which turns max-len off: prettier wraps code at 120 (printWidth) but cannot break
    // strings, templates or comments, so this rule catches those, with room for what prettier leaves a little long.
    rules: { "max-len": ["error", { code: 140, ignoreUrls: true, ignoreRegExpLiterals: true }] },
  },
  {
    // One job per function: none over 60 lines in the domain and the UI (tests' describe blocks aside).
    files: ["lib/**/*.{ts,tsx}", "components/**/*.{ts,tsx}"],
    ignores: ["**/*.test.ts"],
    rules: { "max-lines-per-function": ["error", { max: 60, skipBlankLines: true, skipComments: true }] },
  },
);
