/**
 * `npm run dev` / `npm start`: finds or starts the database and the simulated provider (each a process of
 * its own, which outlives this one), migrates and seeds the database, then runs Next.js with DATABASE_URL
 * and IDP_BASE_URL pointing at them. Asked for, it starts the production parts first (scripts/parts/):
 * `--pgbouncer`, `--redis`, `--balance`.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { prepareDatabase } from "../db/prepare";
import { PartNotInstalled } from "./parts/part-process";
import { checkInstalled, startParts } from "./parts/production-parts";
import { config } from "../lib/core/config";
import { ensureProvider } from "../lib/lab/provider-process-control";
import { nextStartOptions } from "./next-start-options";

const [mode = "dev", ...launchArgs] = process.argv.slice(2);
if (mode !== "dev" && mode !== "start")
  throw new Error(`usage: launch dev|start [--instances N] [--pgbouncer] [--redis] [--balance] [next options]`);

// The parts' flags, taken out of what goes on to Next.js.
const partFlags = ["--pgbouncer", "--redis", "--balance"];
const asked = {
  pgbouncer: launchArgs.includes("--pgbouncer"),
  redis: launchArgs.includes("--redis"),
  balance: launchArgs.includes("--balance"),
};
const args = launchArgs.filter((arg) => !partFlags.includes(arg));

// `--instances N`: N app processes on consecutive ports over one database, each told the others' URLs.
const instancesAt = args.indexOf("--instances");
const instances = instancesAt === -1 ? 1 : Number(args[instancesAt + 1]);
if (!Number.isInteger(instances) || instances < 1 || instances > 10) throw new Error("--instances takes 1 to 10");
const nextArgs =
  instancesAt === -1 ? args : args.filter((_, index) => index !== instancesAt && index !== instancesAt + 1);
const portAt = nextArgs.findIndex((arg) => arg === "-p" || arg === "--port");
const basePort = Number(portAt === -1 ? (process.env.PORT ?? 3000) : nextArgs[portAt + 1]);
const otherArgs = portAt === -1 ? nextArgs : nextArgs.filter((_, index) => index !== portAt && index !== portAt + 1);
// `--balance`: the port is the balancer's, and the instances take the ports after it.
const firstInstancePort = asked.balance ? basePort + 1 : basePort;

try {
  checkInstalled(asked);
} catch (error) {
  if (!(error instanceof PartNotInstalled)) throw error;
  console.error(`[launch] ${error.message}`);
  process.exit(1);
}

const databaseUrl = await prepareDatabase(process.env.LAB_DATABASE ?? "leaselab");
console.log(`[launch] database ready: ${new URL(databaseUrl).host}${new URL(databaseUrl).pathname}`);
// Every instance talks to the one provider (unless IDP_BASE_URL names one, or SIMULATE_PROVIDER=false a real one).
const providerUrl =
  config.simulateProvider && !process.env.IDP_BASE_URL
    ? await ensureProvider(databaseUrl, config.providerPort)
    : config.identityProviderBaseUrl;
console.log(`[launch] provider: ${providerUrl}`);

const instancePorts = Array.from({ length: instances }, (_, index) => firstInstancePort + index);
const parts = await startParts(asked, { directUrl: databaseUrl, balancerPort: basePort, instancePorts });

const urls = instancePorts.map((port) => `http://localhost:${port}`);
const children = urls.map((url, index) => {
  // Several dev servers cannot share one .next directory: each instance after the first gets its own, with a
  // TypeScript config there for Next to add that directory's types to (see next.config.ts).
  const distDir = mode === "dev" && index > 0 ? { NEXT_DIST_DIR: `.next-instance-${index + 1}` } : {};
  if (distDir.NEXT_DIST_DIR)
    writeFileSync(`${distDir.NEXT_DIST_DIR}.tsconfig.json`, JSON.stringify({ extends: "./tsconfig.json" }, null, 2));
  const child = spawn(
    process.execPath,
    [
      fileURLToPath(import.meta.resolve("next/dist/bin/next")),
      mode,
      "-p",
      String(instancePorts[index]),
      ...(mode === "start" ? nextStartOptions : []),
      ...otherArgs,
    ],
    {
      stdio: "inherit",
      env: {
        ...process.env,
        ...distDir,
        ...parts.appEnv,
        IDP_BASE_URL: providerUrl,
        LAB_INSTANCE: String(index + 1),
        LAB_PEER_URLS: urls.filter((other) => other !== url).join(","),
      },
    },
  );
  if (instances > 1 || asked.balance) console.log(`[launch] instance ${index + 1} on ${url}`);
  return child;
});
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => children.forEach((child) => child.kill(signal)));
let running = children.length;
for (const child of children)
  child.on("exit", (code, signal) => {
    if (--running === 0) void parts.stop().then(() => process.exit(code ?? (signal ? 1 : 0)));
  });
