/**
 * The CPU time a process and its descendants have used so far (user + system, all their threads), from
 * Linux's /proc: what the app spends per switch, measured in the same run as the wall times it explains.
 * Null where /proc is missing.
 */
import { execSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

let ticksPerSecond: number | undefined;

interface ProcessStat {
  parent: number;
  cpuMs: number;
}

function statOf(pid: number): ProcessStat | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // After the command's name (in parentheses, which may hold spaces) come the state (field 3), the parent
    // (field 4) and, as fields 14 and 15, the user and system time in clock ticks.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticksPerSecond ??= Number(execSync("getconf CLK_TCK", { encoding: "utf8" })) || 100;
    return { parent: Number(fields[1]), cpuMs: ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond) * 1000 };
  } catch {
    return null;
  }
}

/** The CPU time of `pid` and every process under it (a framework's workers count as the app's). */
export function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  const own = statOf(pid);
  if (!own) return null;
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = statOf(Number(name));
    if (stat) children.set(stat.parent, [...(children.get(stat.parent) ?? []), Number(name)]);
  }
  let total = 0;
  const visit = (each: number) => {
    total += each === pid ? own.cpuMs : (statOf(each)?.cpuMs ?? 0);
    for (const child of children.get(each) ?? []) visit(child);
  };
  visit(pid);
  return total;
}

/** The CPU time of several processes (and theirs), added up: two instances of the app count as one. */
export function processesCpuMs(pids: readonly (number | undefined)[]): number | null {
  let total = 0;
  for (const pid of pids) {
    const each = processCpuMs(pid);
    if (each === null) return null;
    total += each;
  }
  return pids.length === 0 ? null : total;
}
