/**
 * The CPU time a process has used so far (user + system, all its threads), from Linux's /proc: what the
 * app spends per switch, measured in the same run as the wall times it explains. Null where /proc is missing.
 */
import { execSync } from "node:child_process";
import { readFileSync } from "node:fs";

let ticksPerSecond: number | undefined;

export function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // After the command's name (in parentheses, which may hold spaces) come the state (field 3) and, as
    // fields 14 and 15, the user and system time in clock ticks.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticksPerSecond ??= Number(execSync("getconf CLK_TCK", { encoding: "utf8" })) || 100;
    return ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond) * 1000;
  } catch {
    return null;
  }
}
