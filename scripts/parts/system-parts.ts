/**
 * The system's programs that `npm test` needs besides Node: Chromium for the browser tests, PgBouncer, redis-server
 * and HAProxy for the tiers and experiments that run the app behind them. `npm test` (and so `.ci/run`) checks
 * them first: installs the missing ones when it runs as root with apt-get, else stops at once with the one command
 * that installs them. What a machine has is asked through `Machine`, so that the decision can be tested apart.
 */
import { chromium } from "@playwright/test";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { locateProgram } from "./part-process";
import { postgresBinDir } from "./postgres-node";

interface SystemPart {
  debianPackage: string;
  /** Any of these programs will do. */
  programs: string[];
}

export const systemParts: SystemPart[] = [
  { debianPackage: "chromium", programs: ["chromium", "chromium-browser"] },
  { debianPackage: "pgbouncer", programs: ["pgbouncer"] },
  { debianPackage: "redis-server", programs: ["redis-server"] },
  { debianPackage: "haproxy", programs: ["haproxy"] },
];

/** What `npm run bench` needs: HAProxy, for two instances behind it. */
export const benchSystemParts = systemParts.filter((part) => part.debianPackage === "haproxy");

/**
 * What `npm run test:failover` needs (and the replicated shapes, `--replica` and `--ha`): Debian's PostgreSQL 15
 * (its pg_basebackup, outside PATH), Patroni, etcd, and HAProxy in front of them.
 */
export const failoverSystemParts: SystemPart[] = [
  { debianPackage: "postgresql-15", programs: [path.join(postgresBinDir(), "pg_basebackup")] },
  { debianPackage: "patroni", programs: ["patroni"] },
  { debianPackage: "etcd-server", programs: ["etcd"] },
  { debianPackage: "haproxy", programs: ["haproxy"] },
];

/** What the decision needs to know of a machine, and the one thing it does to it. */
export interface Machine {
  /** The path of a program (on PATH or in the sbin folders), or null. */
  locate(program: string): string | null;
  /** Playwright's own Chromium (`npx playwright install chromium`) is there: Debian's is not needed. */
  hasPlaywrightChromium: boolean;
  isRoot: boolean;
  /** Runs a program, its output to this process's (how it ended is judged by what is installed after it). */
  run(program: string, args: string[]): void;
}

export type Plan =
  | { kind: "ready" }
  | { kind: "install"; packages: string[]; aptGet: string }
  | { kind: "stop"; packages: string[]; command: string };

/** Debian's Chromium, which the browser tests and the screenshots use when it is there (else Playwright's own). */
export const findSystemChromium = (machine: Pick<Machine, "locate"> = thisMachine): string | undefined =>
  ["chromium", "chromium-browser"].map((program) => machine.locate(program)).find((found) => found !== null) ??
  undefined;

export function planSystemParts(machine: Omit<Machine, "run">, parts = systemParts): Plan {
  const packages = parts
    .filter(({ debianPackage, programs }) => {
      if (debianPackage === "chromium" && machine.hasPlaywrightChromium) return false;
      return programs.every((program) => machine.locate(program) === null);
    })
    .map(({ debianPackage }) => debianPackage);
  if (packages.length === 0) return { kind: "ready" };
  const aptGet = machine.locate("apt-get");
  if (machine.isRoot && aptGet !== null) return { kind: "install", packages, aptGet };
  return {
    kind: "stop",
    packages,
    command: `${machine.isRoot ? "" : "sudo "}apt-get install -y ${packages.join(" ")}`,
  };
}

/**
 * Makes sure the parts are there, installing them when it may; answers a message to stop with when they are
 * not (null: ready). Progress goes to `log`.
 */
export function ensureSystemParts(
  machine: Machine = thisMachine,
  log = console.log,
  { parts = systemParts, neededBy = "npm test" } = {},
): string | null {
  const plan = planSystemParts(machine, parts);
  if (plan.kind === "ready") return null;
  const named = plan.packages.join(", ");
  if (plan.kind === "stop")
    return `${neededBy} needs ${named}, not installed here. Install ${plan.packages.length > 1 ? "them" : "it"} with: ${plan.command}`;
  log(`[system parts] installing ${named} with apt-get`);
  machine.run(plan.aptGet, ["update", "-qq"]);
  machine.run(plan.aptGet, ["install", "-y", "-qq", ...plan.packages]);
  // A package's service may fail to start where there is no init system, and apt-get then fails; what counts is
  // whether the programs are there now.
  const after = planSystemParts(machine, parts);
  return after.kind === "ready" ? null : `apt-get did not install ${after.packages.join(", ")}: see its output above`;
}

export const thisMachine: Machine = {
  locate: locateProgram,
  get hasPlaywrightChromium() {
    return existsSync(chromium.executablePath());
  },
  isRoot: process.getuid?.() === 0,
  run(program, args) {
    spawnSync(program, args, { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  },
};
