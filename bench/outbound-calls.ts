/**
 * What one outbound provider call costs the caller in CPU, by the way it is sent: Node's global `fetch`, and
 * `node:http` with a kept-alive agent (what lib/provider/client.ts sends); `undici.request` too when
 * BENCH_UNDICI names an installed undici (it is not a dependency: it was measured to choose). Each call is a
 * POST with a small JSON body, its answer read as JSON, under an AbortSignal, as the provider client does.
 * The server is a bare `node:http` one in a child process, so its CPU is not the caller's. `concurrency`
 * calls at once, the ways taking turns in blocks in a seeded order; CPU from `process.cpuUsage()`.
 *
 * Alone: `BENCH_UNDICI=/path/to/node_modules/undici npx tsx bench/outbound-calls.ts`.
 */
import { spawn } from "node:child_process";
import http from "node:http";
import { pathToFileURL } from "node:url";
import { seededRandom } from "../lib/provider-sim/chaos";
import { repeated, shuffled, type Repeated } from "./stats";

type Send = (url: string, body: string, signal: AbortSignal) => Promise<unknown>;

/** A provider's answer to a link: the account's identities, about 150 bytes of JSON. */
const answerBody = JSON.stringify([
  { provider: "auth0", user_id: "bench-001-email", connection: "Username-Password-Authentication" },
  { provider: "github", user_id: "bench-001", connection: "github" },
]);

const serverSource = `
  import http from "node:http";
  const body = ${JSON.stringify(answerBody)};
  const server = http.createServer((request, response) => {
    request.resume();
    request.on("end", () => response.writeHead(201, { "Content-Type": "application/json" }).end(body));
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, "127.0.0.1", () => process.send(server.address().port));`;

async function startJsonServer(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", serverSource], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (message) => resolve(Number(message)));
    child.once("exit", (code) => reject(new Error(`the JSON server exited (${code})`)));
  });
  return { url: `http://127.0.0.1:${port}/api/v2/users/bench-001/identities`, stop: () => child.kill() };
}

const viaFetch: Send = async (url, body, signal) => {
  const response = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body, signal });
  return response.json();
};

const agent = new http.Agent({ keepAlive: true });
const viaNodeHttp: Send = (url, body, signal) =>
  new Promise((resolve, reject) => {
    const request = http.request(url, {
      method: "POST",
      agent,
      signal,
      headers: { "Content-Type": "application/json" },
    });
    request.on("error", reject);
    request.on("response", (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve(JSON.parse(text)));
      response.on("error", reject);
    });
    request.end(body);
  });

interface Undici {
  request(
    url: string,
    options: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal },
  ): Promise<{ body: { json(): Promise<unknown> } }>;
}

async function viaUndici(): Promise<Send | null> {
  const location = process.env.BENCH_UNDICI;
  if (!location) return null;
  const undici = (await import(pathToFileURL(`${location}/index.js`).href)) as Undici;
  return async (url, body, signal) => {
    const answer = await undici.request(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body,
      signal,
    });
    return answer.body.json();
  };
}

export interface OutboundCallsResult {
  concurrency: number;
  callsPerBlock: number;
  /** Per way: the caller's CPU ms per call, over blocks. */
  cpuMsPerCall: Record<string, Repeated>;
}

/** `blocks` blocks of `rounds` × `concurrency` calls per way, after a warm-up block of each. */
export async function outboundCalls(options: {
  concurrency: number;
  rounds: number;
  blocks: number;
  random: () => number;
}): Promise<OutboundCallsResult> {
  const server = await startJsonServer();
  const undici = await viaUndici();
  const ways: Record<string, Send> = { fetch: viaFetch, "node:http": viaNodeHttp, ...(undici ? { undici } : {}) };
  const body = JSON.stringify({ provider: "github", user_id: "bench-001" });
  const block = async (send: Send) => {
    for (let round = 0; round < options.rounds; round++)
      await Promise.all(
        Array.from({ length: options.concurrency }, () => send(server.url, body, AbortSignal.timeout(10_000))),
      );
  };
  const samples = Object.fromEntries(Object.keys(ways).map((way) => [way, [] as number[]]));
  try {
    for (const way of Object.keys(ways)) await block(ways[way]!);
    for (let index = 0; index < options.blocks; index++)
      for (const way of shuffled(Object.keys(ways), options.random)) {
        const before = process.cpuUsage();
        await block(ways[way]!);
        const used = process.cpuUsage(before);
        samples[way]!.push((used.user + used.system) / 1000 / (options.rounds * options.concurrency));
      }
  } finally {
    server.stop();
    agent.destroy();
  }
  return {
    concurrency: options.concurrency,
    callsPerBlock: options.rounds * options.concurrency,
    cpuMsPerCall: Object.fromEntries(Object.entries(samples).map(([way, runs]) => [way, repeated(runs)])),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const seed = Number(process.env.BENCH_SEED ?? Date.now() % 100_000);
  for (const concurrency of [1, 16]) {
    const result = await outboundCalls({
      concurrency,
      rounds: 2_000 / concurrency,
      blocks: 9,
      random: seededRandom(seed),
    });
    console.log(`${concurrency} at once (seed ${seed}), CPU ms per call, median [min–max] of 9 blocks:`);
    for (const [way, cpu] of Object.entries(result.cpuMsPerCall))
      console.log(`  ${way.padEnd(10)} ${cpu.median.toFixed(4)} [${cpu.min.toFixed(4)}–${cpu.max.toFixed(4)}]`);
  }
}
