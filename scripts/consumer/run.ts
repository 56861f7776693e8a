/**
 * `npm run test:consumer`: both packages used from outside the repository, as another team would. It packs
 * `@lease-lock-lab/lease` and `@lease-lock-lab/race` (`npm pack`, which builds them), makes a new project in a
 * temporary folder, installs the two tarballs with kysely, pg and @playwright/test from the registry (the
 * repository's versions), and copies in `project/`: a tiny node:http app with a racy claim and one guarded by
 * the installed lease, a Playwright spec with the installed kit (the racy claim must fail its one-winner
 * assertion, the guarded one pass), and the ShedLock-derived conformance cases run by `node --test` against
 * the installed lease and its double. On this checkout's embedded PostgreSQL (or DATABASE_URL's server), in a
 * database of its own. The folder is removed afterwards unless KEEP_CONSUMER=1.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { recreateDatabase } from "../../db/server";
import { findSystemChromium } from "../parts/system-parts";

const root = path.resolve(import.meta.dirname, "../..");
const started = performance.now();
const step = (what: string) =>
  console.log(`[consumer] ${what} (${Math.round((performance.now() - started) / 1000)} s)`);

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer().once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): string {
  return execFileSync(command, args, { cwd, env: { ...process.env, ...env }, encoding: "utf8", stdio: "pipe" });
}

function runShown(command: string, args: string[], cwd: string, env: Record<string, string>): void {
  execFileSync(command, args, { cwd, env: { ...process.env, ...env }, stdio: "inherit" });
}

const { dependencies, devDependencies } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const fromRegistry = [
  `kysely@${dependencies.kysely}`,
  `pg@${dependencies.pg}`,
  `@playwright/test@${devDependencies["@playwright/test"]}`,
];

const project = mkdtempSync(path.join(os.tmpdir(), "lease-lock-consumer-"));
try {
  const packed = JSON.parse(
    run("npm", ["pack", "--json", "--pack-destination", project, "-w", "lib/lease", "-w", "e2e/race"], root),
  ) as { filename: string }[];
  step(`packed ${packed.map((each) => each.filename).join(", ")}`);
  writeFileSync(
    path.join(project, "package.json"),
    `${JSON.stringify({ name: "lease-lock-consumer", private: true, type: "module" }, null, 2)}\n`,
  );
  const tarballs = packed.map((each) => `./${each.filename}`);
  run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...tarballs, ...fromRegistry], project);
  step(`installed the tarballs and ${fromRegistry.join(", ")} in ${project}`);
  cpSync(path.join(import.meta.dirname, "project"), project, { recursive: true });

  const databaseUrl = await recreateDatabase(`${process.env.LAB_DB_PREFIX ?? "lab"}_consumer`);
  const env = { DATABASE_URL: databaseUrl, PORT: String(await freePort()), CHROMIUM_PATH: findSystemChromium() ?? "" };
  runShown(process.execPath, ["--test", "--test-reporter=spec", "conformance.test.mjs"], project, env);
  step("the conformance cases passed against the installed lease and its double");
  runShown("npx", ["playwright", "test"], project, env);
  step("the installed kit caught the racy claim and passed the guarded one");
} finally {
  if (process.env.KEEP_CONSUMER === "1") console.log(`[consumer] kept ${project}`);
  else rmSync(project, { recursive: true, force: true });
}
