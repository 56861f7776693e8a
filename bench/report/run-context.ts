/** Where and on what a run ran: the machine, its load before and after, the versions and the commit. */
import { execSync } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { round } from "../stats";

export function versionsOf(packages: string[]): Record<string, string> {
  return Object.fromEntries(
    packages.map((name) => {
      const manifest = path.join(import.meta.dirname, "..", "..", "node_modules", name, "package.json");
      return [name, (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version];
    }),
  );
}

const loadAverage = () => os.loadavg().map((value) => round(value, 2));

/** Taken when the run starts; `finish()` adds the load after and the versions. */
export function runContext() {
  const loadAverageBefore = loadAverage();
  return {
    finish: (postgres: string) => ({
      machine: {
        cpus: os.cpus().map((cpu) => cpu.model),
        cores: os.cpus().length,
        memoryGb: round(os.totalmem() / 2 ** 30, 1),
        platform: `${os.type()} ${os.release()} ${os.arch()}`,
        loadAverageBefore,
        loadAverageAfter: loadAverage(),
      },
      versions: {
        node: process.version,
        postgres,
        commit: execSync("git rev-parse --short HEAD", { encoding: "utf8" }).trim(),
        ...versionsOf(["next", "kysely", "pg", "msw"]),
      },
    }),
  };
}
