/**
 * `npm run dev` / `npm start`: finds or starts the database and the simulated provider (each a process of
 * its own, which outlives this one), migrates and seeds the database, then runs Next.js with DATABASE_URL
 * and IDP_BASE_URL pointing at them. Asked for, it starts the production parts first (scripts/parts/):
 * `--pgbouncer`, `--redis`, `--balance`; and instead of the embedded server, a replicated database:
 * `--replica async|sync` (a primary and a streaming standby) or `--ha` (the same under Patroni).
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { prepareDatabase } from "../db/prepare";
import { PartNotInstalled } from "./parts/part-process";
import { checkInstalled, startParts } from "./parts/production-parts";
import { checkDatabaseInstalled, startDatabase } from "./parts/database-parts";
import { config } from "../lib/core/config";
import { ensureProvider } from "../lib/lab/provider-process-control";
import { nextStartOptions, serverNodeOptions } from "./next-start-options";

const [mode = "dev", ...launchArgs] = process.argv.slice(2);
if (mode !== "dev" && mode !== "start")
  throw new Error(
    "usage: launch dev|start [--instances N] [--pgbouncer] [--redis] [--balance] [--replica async|sync | --ha] [next options]",
  );

// The parts' flags, taken out of what goes on to Next.js.
const partFlags = ["--pgbouncer", "--redis", "--balance"];
const asked = {
  pgbouncer: launchArgs.includes("--pgbouncer"),
  redis: launchArgs.includes("--redis"),
  balance: launchArgs.includes("--balance"),
};
// `--replica async|sync` and `--ha`: the database's shape.
const replicaAt = launchArgs.indexOf("--replica");
const replica = replicaAt === -1 ? null : launchArgs[replicaAt + 1];
if (replica !== null && replica !== "async" && replica !== "sync") throw new Error("--replica takes async or sync");
const databaseAsked = { replica, ha: launchArgs.includes("--ha") } as const;
const args = launchArgs.filter(
  (arg, index) =>
    !partFlags.includes(arg) &&
    arg !== "--ha" &&
    (replicaAt === -1 || (index !== replicaAt && index !== replicaAt + 1)),
);

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
  checkDatabaseInstalled(databaseAsked);
} catch (error) {
  if (!(error instanceof PartNotInstalled)) throw error;
  console.error(`[launch] ${error.message}`);
  process.exit(1);
}

const databaseName = process.env.LAB_DATABASE ?? "leaselab";
// Under a replicated database the simulated provider keeps its state on the embedded server, as a third party
// keeps its own: a failover of the lab's database loses none of its writes. Prepared first, before DATABASE_URL
// names the replicated one.
const providerStateUrl =
  (databaseAsked.replica || databaseAsked.ha) && config.simulateProvider && !process.env.IDP_BASE_URL
    ? await prepareDatabase(`${databaseName}_provider`)
    : null;
// A replicated database is the app's DATABASE_URL: what follows (migrations, the provider) uses it.
const replicated = await startDatabase(databaseAsked, databaseName);
if (replicated) process.env.DATABASE_URL = replicated.url;
const databaseUrl = await prepareDatabase(databaseName);
console.log(`[launch] database ready: ${new URL(databaseUrl).host}${new URL(databaseUrl).pathname}`);
// Every instance talks to the one provider (unless IDP_BASE_URL names one, or SIMULATE_PROVIDER=false a real one).
const providerUrl =
  config.simulateProvider && !process.env.IDP_BASE_URL
    ? await ensureProvider(databaseUrl, config.providerPort, undefined, providerStateUrl ?? databaseUrl)
    : config.identityProviderBaseUrl;
console.log(`[launch] provider: ${providerUrl}`);

const instancePorts = Array.from({ length: instances }, (_, index) => firstInstancePort + index);
const started = await startParts(asked, { directUrl: databaseUrl, balancerPort: basePort, instancePorts });
const parts = {
  appEnv: {
    ...started.appEnv,
    ...replicated?.appEnv,
    ...(providerStateUrl ? { PROVIDER_DATABASE_URL: providerStateUrl } : {}),
  },
  // The database last: the app and the other parts may still use it while they stop.
  stop: async () => {
    await started.stop();
    await replicated?.stop();
  },
};

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
      ...(mode === "start" ? serverNodeOptions : []),
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
