/**
 * Where a process's CPU went, from V8's `.cpuprofile` files (`node --cpu-prof`): every sample's time is put on
 * what the code is. The code of a sample is its stack's nearest frame that belongs to this project or to a
 * package, mapped back through the build's source maps; Node.js's own internals (sockets, HTTP parsing,
 * streams, timers, the web `Request` and `Response`) count for the code that called them.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  /** In µs of the machine's monotonic clock, as `process.hrtime` reads it in any process. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Now on the monotonic clock the profiles' times are on, in µs. */
export const monotonicMicros = (): number => Number(process.hrtime.bigint() / 1000n);

/**
 * What a source file is, as docs/performance.md's table names it; null: Node.js internals, which count for their
 * caller.
 */
export function partOf(encoded: string): string | null {
  // A bundle's source map names its sources URL-encoded (`%40opentelemetry`, `%5BuserId%5D`).
  const source = decodeURIComponent(encoded);
  const packageName = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(source)?.[1];
  if (
    packageName === "next" ||
    packageName?.startsWith("@next/") ||
    source.includes("[turbopack]/") ||
    source.startsWith("webpack://next/")
  )
    return "Next.js (routing, request, response)";
  if (packageName && /^(react|react-dom|scheduler)$/.test(packageName)) return "React";
  if (packageName && /^(pg|pg-protocol|pg-pool|pg-types|pgpass|pg-connection-string|postgres-.*)$/.test(packageName))
    return "pg (the PostgreSQL driver)";
  if (packageName === "kysely") return "Kysely (building queries)";
  if (packageName?.startsWith("@opentelemetry/")) return "OpenTelemetry (spans)";
  if (packageName === "zod") return "zod (checking input)";
  if (packageName) return packageName;
  // Node.js's internals: the caller's. Node's own undici among them: the provider calls go over `node:http`, so
  // what runs in undici is the web `Request` and `Response` a route handler is given and answers (Next.js's,
  // or a route's own `request.json()`), with the WebAssembly HTTP parser it carries (llhttp).
  if (source.includes("internal/deps/undici")) return null;
  if (source.startsWith("node:") || source.startsWith("wasm:") || source === "") return null;
  const file = source.replace(/^.*\[project\]\//, "").replace(/^.*?\/(?=(lib|app|db|bench)\/)/, "");
  if (file.startsWith("lib/lab/")) return "the lab (timeline, faults, stream)";
  if (file.startsWith("lib/lease/") || file.startsWith("lib/switch/")) return "the switch and the lease";
  if (file.startsWith("lib/provider")) return "the provider client";
  if (/^(lib\/core|lib\/web|app|db|bench)\//.test(file)) return "routes, sessions, database helpers";
  return `other (${file})`;
}

const special: Record<string, string | undefined> = {
  "(garbage collector)": "garbage collection",
  "(program)": "V8 and native code outside JavaScript",
  "(idle)": undefined,
  // Its own part, whoever writes: a write to a socket wakes the reader (a PostgreSQL backend, the provider),
  // which on two cores often takes the writer's core at once, and the profile, sampling wall time, books part of
  // that wait on the write. Only `writev`, a write of several buffers (pg's corked extended-protocol messages
  // among them): a single-buffer write (`writeBuffer`, `writeUtf8String`) stays with its caller. In one process,
  // 64 switches at once (bench/switch-in-process.ts), over its profiled waves: of the product's 0.88 ms per
  // switch, writev 0.46, where the thread's CPU was 0.58 and its wait 0.58; with Node and PostgreSQL pinned to
  // different cores (`--apart`), writev 0.02.
  writev: "writev (socket writes, and the wait for a core after them)",
};

class SourceMaps {
  private readonly maps = new Map<string, SourceMap | null>();

  /**
   * The original source of a frame: a package's file as it is (its own maps name sources relative to the
   * package, which would hide whose they are), a bundle's through its source map.
   */
  sourceOf(frame: CallFrame): string {
    if (!frame.url.startsWith("file://")) return frame.url;
    const file = fileURLToPath(frame.url);
    if (file.includes("/node_modules/")) return file;
    let map = this.maps.get(file);
    if (map === undefined) {
      const mapFile = `${file}.map`;
      map = existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, "utf8"))) : null;
      this.maps.set(file, map);
    }
    const entry = map?.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string } | undefined;
    return entry?.originalSource ?? file;
  }
}

/**
 * CPU time per part, in ms, over every `.cpuprofile` in `directory`, counting only the samples taken within
 * `window` (µs, `monotonicMicros`): the measured load, not the start-up. Idle time is left out.
 */
export function cpuByPart(directory: string, window: { fromUs: number; toUs: number }): Map<string, number> {
  const maps = new SourceMaps();
  const totals = new Map<string, number>();
  for (const name of readdirSync(directory).filter((each) => each.endsWith(".cpuprofile"))) {
    const profile = JSON.parse(readFileSync(path.join(directory, name), "utf8")) as CpuProfile;
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const parentOf = new Map<number, number>();
    for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
    const partCache = new Map<number, string | undefined>();
    const partOfNode = (id: number): string | undefined => {
      if (partCache.has(id)) return partCache.get(id);
      const frame = byId.get(id)!.callFrame;
      let part: string | undefined;
      if (Object.hasOwn(special, frame.functionName) && frame.url === "") part = special[frame.functionName];
      else {
        const own = partOf(maps.sourceOf(frame));
        const parent = parentOf.get(id);
        part = own ?? (parent === undefined ? "Node.js internals (sockets, timers)" : partOfNode(parent));
        if (part === undefined) part = "Node.js internals (sockets, timers)";
      }
      partCache.set(id, part);
      return part;
    };
    let at = profile.startTime;
    profile.samples.forEach((id, index) => {
      const delta = profile.timeDeltas[index] ?? 0;
      at += delta;
      if (at < window.fromUs || at > window.toUs) return;
      const part = partOfNode(id);
      if (part !== undefined) totals.set(part, (totals.get(part) ?? 0) + delta / 1000);
    });
  }
  return totals;
}
