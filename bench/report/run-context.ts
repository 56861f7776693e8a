/** Where and on what a run ran: the machine, its load before and after, the versions and the commit. */
import { execSync } from "node:child_process";
import { createHash } from "node:crypto";
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

/**
 * The machine's speed: the CPU ms this process takes for a fixed piece of work (a switch answer's JSON parsed
 * and hashed 20,000 times), the least of 5 tries. Absolute figures of runs on two machines differ by about
 * the ratio of their probes; the figures this bench reports are ratios within one run.
 */
export function cpuProbeMs(): number {
  const answer = JSON.stringify({ primaryIdentityId: "github|8812", changed: true, operationId: crypto.randomUUID() });
  const tries = Array.from({ length: 5 }, () => {
    const before = process.cpuUsage();
    for (let i = 0; i < 20_000; i++)
      createHash("sha256")
        .update(JSON.stringify(JSON.parse(answer)))
        .digest("hex");
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000;
  });
  return round(Math.min(...tries), 2);
}

/** Taken when the run starts; `finish()` adds the load after and the versions. */
export function runContext() {
  const loadAverageBefore = loadAverage();
  const cpuProbeBefore = cpuProbeMs();
  return {
    finish: (postgres: string) => ({
      machine: {
        cpus: os.cpus().map((cpu) => cpu.model),
        cores: os.cpus().length,
        memoryGb: round(os.totalmem() / 2 ** 30, 1),
        platform: `${os.type()} ${os.release()} ${os.arch()}`,
        loadAverageBefore,
        loadAverageAfter: loadAverage(),
        cpuProbeMs: { before: cpuProbeBefore, after: cpuProbeMs() },
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
