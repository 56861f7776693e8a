/**
 * `npm test`: every tier but the full model run, side by side where they do not wait on each other. First the
 * system's programs the tiers need, installed or asked for (scripts/parts/system-parts.ts); then the checks
 * (lint, typecheck, unit tests, what each package packs) and the lease tier, which need no build; then the
 * build, and beside it the packages installed into a project outside the repository; then the built app's
 * tiers: integration with a fixed-seed sample of the model checker, then the browser tests. Each line of
 * output is prefixed with its step's name; a failed phase stops the run after its other steps end.
 */
import { spawn } from "node:child_process";
import { ensureSystemParts } from "./parts/system-parts";

interface Step {
  name: string;
  /** An npm script, with arguments for the command it runs. */
  script: string;
  args?: string[];
  env?: Record<string, string>;
}

// About 50 schedules, rich and quick (some with one instance behind PgBouncer), and the `none` control; the fixed seed
// draws the same ones every run.
const modelSample = { MODEL_SEED: "1815", MODEL_RUNS: "12", MODEL_QUICK_RUNS: "28", MODEL_POOLED_RUNS: "10" };
const modelReplay = `${Object.entries(modelSample)
  .map(([name, value]) => `${name}=${value}`)
  .join(" ")} npm run test:model`;

const phases: Step[][] = [
  [
    { name: "lint", script: "lint" },
    { name: "typecheck", script: "typecheck" },
    { name: "unit", script: "test:unit" },
    { name: "lease", script: "test:lease" },
    // Each package of the repository (npm workspaces) builds and packs exactly what its README lists.
    { name: "packages", script: "check:packages" },
  ],
  // Beside the build (after check:packages, which builds the packages too): both packages packed and installed into
  // a new project outside the repository, racing its app with the installed kit (scripts/consumer/run.ts).
  [
    { name: "build", script: "build" },
    { name: "consumer", script: "test:consumer" },
  ],
  // One after the other: each runs its files side by side already, and both at once load the machine enough
  // to slow the app past the tests' timeouts.
  // With them, the lease's HTTP tests again in the production shape (HAProxy, two instances, PgBouncer).
  [
    {
      name: "integration",
      script: "test:integration",
      args: ["--project", "model", "--project", "production"],
      env: modelSample,
    },
  ],
  // Each race once; `npm run test:e2e` runs them ten times.
  [{ name: "e2e", script: "test:e2e", env: { RACE_REPEATS: "1" } }],
];

const width = Math.max(...phases.flat().map((step) => step.name.length));
const seconds = (since: number) => `${Math.round((performance.now() - since) / 1000)} s`;

function run(step: Step): Promise<{ step: Step; ok: boolean; took: string }> {
  const started = performance.now();
  const prefix = `${step.name.padEnd(width)} │ `;
  const child = spawn("npm", ["run", "--silent", step.script, ...(step.args ? ["--", ...step.args] : [])], {
    env: { ...process.env, ...step.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const stream of [child.stdout, child.stderr]) {
    let partial = "";
    stream.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop()!;
      for (const line of lines) process.stdout.write(`${prefix}${line}\n`);
    });
    stream.on("end", () => partial && process.stdout.write(`${prefix}${partial}\n`));
  }
  return new Promise((resolve) =>
    child.on("close", (code) => resolve({ step, ok: code === 0, took: seconds(started) })),
  );
}

const missingParts = ensureSystemParts();
if (missingParts) {
  console.error(missingParts);
  process.exit(1);
}

const started = performance.now();
const summary: string[] = [];
let failed: Step[] = [];
for (const phase of phases) {
  if (phase.some((step) => step.env === modelSample))
    console.log(`model check sample: seed ${modelSample.MODEL_SEED}; the same schedules again: ${modelReplay}`);
  const results = await Promise.all(phase.map(run));
  for (const { step, ok, took } of results)
    summary.push(`${step.name.padEnd(width)}  ${ok ? "passed" : "FAILED"}  ${took}`);
  failed = results.filter((result) => !result.ok).map((result) => result.step);
  if (failed.length > 0) break;
}

console.log(
  `\n${summary.join("\n")}\n${"total".padEnd(width)}  ${failed.length ? "FAILED" : "passed"}  ${seconds(started)}`,
);
if (failed.some((step) => step.env === modelSample))
  console.log(`If the model check failed, its schedules again: ${modelReplay}`);
process.exitCode = failed.length ? 1 : 0;
