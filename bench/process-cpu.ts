/**
 * The CPU time a process and its descendants have used so far (user + system, all their threads), from
 * Linux's /proc: what the app spends per switch, measured in the same run as the wall times it explains.
 * Null where /proc is missing. Its main threads' share apart (`processTreeCpu`): a V8 profile sees only the main
 * thread, so the rest (V8's collector and compiler helpers, libuv's pool) is what a profile leaves out.
 *
 * Each thread's time on a core is read from its schedstat, in ns, not from the clock ticks of its stat (10 ms
 * each, counted per thread): the apps' CPU at rest, a few ms a second spread over a dozen threads, read 0 in
 * every 1 s window (so nothing was taken off their K = 1 waves, 4.8 s each), and the storm's CPU a click came
 * in thirds of a ms (one tick over 30 clicks; the run of 7b124da: 1.00, 2.67, 3.00, 4.00). A thread that ends
 * takes its schedstat with it (a process's stat keeps its ticks): its time as last read stays counted with its
 * process (`endedThreadsMs`), so only what it ran after that reading is missed (all of it, for a thread that
 * began and ended between two readings). Where the kernel keeps no schedstat, the ticks.
 */
import { execSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";

let ticksPerSecond: number | undefined;
const keepsSchedstat = existsSync("/proc/self/schedstat");

interface ProcessStat {
  parent: number;
  cpuMs: number;
}

/** A process's stat (all its threads), or one thread's: `/proc/PID/task/TID/stat`. */
function statOf(pid: number, thread?: number): ProcessStat | null {
  try {
    const stat = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, "utf8");
    // After the command's name (in parentheses, which may hold spaces) come the state (field 3), the parent
    // (field 4) and, as fields 14 and 15, the user and system time in clock ticks.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticksPerSecond ??= Number(execSync("getconf CLK_TCK", { encoding: "utf8" })) || 100;
    return { parent: Number(fields[1]), cpuMs: ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond) * 1000 };
  } catch {
    return null;
  }
}

/** The thread ids of `pid`, in the order they were created (ids grow); empty when it is gone. */
function threadsOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`)
      .map(Number)
      .sort((a, b) => a - b);
  } catch {
    return [];
  }
}

/** One thread's CPU time so far, ms: its schedstat's, else its ticks'. */
const threadCpuMs = (pid: number, thread: number): number =>
  keepsSchedstat ? threadSchedstat(pid, thread).cpuMs : (statOf(pid, thread)?.cpuMs ?? 0);

/** Per process: each thread's CPU time at its last reading, and the time of its threads that have ended since. */
const threadsRead = new Map<number, { last: Map<number, number>; endedThreadsMs: number }>();

/** A process's CPU time so far, all its threads (those ended since an earlier reading as last read), ms. */
function ownCpuMs(pid: number): number {
  if (!keepsSchedstat) return statOf(pid)?.cpuMs ?? 0;
  const read = threadsRead.get(pid) ?? { last: new Map<number, number>(), endedThreadsMs: 0 };
  threadsRead.set(pid, read);
  const now = new Map(threadsOf(pid).map((thread) => [thread, threadSchedstat(pid, thread).cpuMs]));
  for (const [thread, cpuMs] of read.last) if (!now.has(thread)) read.endedThreadsMs += cpuMs;
  read.last = now;
  return [...now.values()].reduce((sum, cpuMs) => sum + cpuMs, read.endedThreadsMs);
}

/** `pid` and every process under it (a framework's workers count as the app's); empty when `pid` is gone. */
export function processTree(pid: number): number[] {
  if (!statOf(pid)) return [];
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = statOf(Number(name));
    if (stat) children.set(stat.parent, [...(children.get(stat.parent) ?? []), Number(name)]);
  }
  const tree: number[] = [];
  const visit = (each: number) => {
    tree.push(each);
    for (const child of children.get(each) ?? []) visit(child);
  };
  visit(pid);
  return tree;
}

export interface TreeCpu {
  allMs: number;
  /** On each process's main thread only (its thread id is the process's). */
  mainThreadMs: number;
  /**
   * How long the main threads were ready to run but waited for a core (the scheduler's run-queue wait, from
   * `/proc/PID/task/PID/schedstat`, in ns): not CPU time, yet a V8 profile, which samples wall time, books part
   * of it on the code the thread ran next (mostly `writev`: on two cores a write that wakes a PostgreSQL backend
   * often hands it the writer's core at once).
   */
  mainThreadWaitMs: number;
}

/**
 * A thread's time on a core and its run-queue wait so far, in ms (`/proc/PID/task/TID/schedstat`'s first two
 * fields, ns); zeros where the kernel keeps no schedstat.
 */
export function threadSchedstat(pid: number, thread: number): { cpuMs: number; waitMs: number } {
  try {
    const [cpuNs, waitNs] = readFileSync(`/proc/${pid}/task/${thread}/schedstat`, "utf8").split(" ").map(Number);
    return { cpuMs: cpuNs! / 1e6, waitMs: waitNs! / 1e6 };
  } catch {
    return { cpuMs: 0, waitMs: 0 };
  }
}

/**
 * The CPU time of `pid` and every process under it, all their threads and their main threads, and the main
 * threads' run-queue wait, from one scan.
 */
export function processTreeCpu(pid: number | undefined): TreeCpu | null {
  const tree = pid === undefined ? [] : processTree(pid);
  if (tree.length === 0) return null;
  const used = { allMs: 0, mainThreadMs: 0, mainThreadWaitMs: 0 };
  for (const each of tree) {
    used.allMs += ownCpuMs(each);
    used.mainThreadMs += threadCpuMs(each, each);
    used.mainThreadWaitMs += threadSchedstat(each, each).waitMs;
  }
  return used;
}

/** The CPU time of `pid` and every process under it. */
export const processCpuMs = (pid: number | undefined): number | null => processTreeCpu(pid)?.allMs ?? null;

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

/**
 * The CPU time of each thread of `pid` and of every process under it, by process and then thread id, in the order
 * they were created (ids grow): a Node.js process's main thread, then V8's platform workers, then libuv's pool,
 * which starts at its first use. Node 20 names none of them (each is `node` in /proc).
 */
export function threadsCpuMs(pid: number): { pid: number; thread: number; cpuMs: number }[] {
  return processTree(pid).flatMap((each) =>
    threadsOf(each).map((thread) => ({ pid: each, thread, cpuMs: threadCpuMs(each, thread) })),
  );
}
