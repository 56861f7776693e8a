import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, inject, it } from "vitest";
import { databaseOf, providerService } from "../provider-sim/health";
import { providerFor } from "../../test/harness/provider";
import { ensureProvider, probeProvider, sourceDigest, stopProvider } from "./provider-process-control";

// Two checkouts' providers on one machine: this file's `.lab/` is a folder of its own, and "another
// checkout's" provider is the one the file's app talks to (test/harness/provider.ts), which it has no record of.
const databaseUrl = inject("databaseUrl");
const lab = mkdtempSync(path.join(tmpdir(), "provider-control-"));
afterAll(async () => {
  await stopProvider(lab);
  rmSync(lab, { recursive: true, force: true });
});

/** A port nobody listens on (the system's choice, given back at once). */
function freePort(): Promise<number> {
  const server = createServer();
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    }),
  );
}

it("provider:stop stops the provider this checkout started, and never another checkout's", async () => {
  const anotherCheckouts = await providerFor(databaseUrl);
  const other = await probeProvider(anotherCheckouts);
  if (typeof other !== "object") throw new Error(`no provider at ${anotherCheckouts}`);
  expect(await stopProvider(lab)).toBeNull(); // this checkout started none
  // A record naming the other's port but not its process (a provider of this checkout's that ended, and the
  // port taken since) stops nothing either.
  const otherPort = Number(new URL(anotherCheckouts).port);
  writeFileSync(path.join(lab, "provider.json"), JSON.stringify({ ...other, pid: other.pid + 1, port: otherPort }));
  expect(await stopProvider(lab)).toBeNull();
  expect(await probeProvider(anotherCheckouts)).toEqual(other);

  const port = await freePort();
  const ours = await ensureProvider(databaseUrl, port, lab);
  const started = await probeProvider(ours);
  if (typeof started !== "object") throw new Error(`no provider at ${ours}`);
  expect(await stopProvider(lab)).toEqual({ pid: started.pid, port, database: databaseOf(databaseUrl) });
  expect(await probeProvider(ours)).toBe("nobody");
  expect(await probeProvider(anotherCheckouts)).toEqual(other);
  expect(await stopProvider(lab)).toBeNull(); // its record went with it
});

/** A provider left running from before a pull, as its health answers: this database, older code. */
async function olderProvider(port: number) {
  const health = { service: providerService, database: databaseOf(databaseUrl), code: "older" };
  const child = spawn(process.execPath, [
    "-e",
    `require("node:http").createServer((_, res) => res.end(JSON.stringify({ ...${JSON.stringify(health)}, pid: process.pid })))` +
      `.listen(${port}, "127.0.0.1")`,
  ]);
  await expect.poll(async () => typeof (await probeProvider(`http://127.0.0.1:${port}`))).toBe("object");
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return { pid: child.pid!, exited, stop: () => child.kill() };
}

it("starts this checkout's provider again when it runs older code, and refuses one it did not start", async () => {
  const port = await freePort();
  const older = await olderProvider(port);
  try {
    await expect(ensureProvider(databaseUrl, port, lab)).rejects.toThrow(/runs other code than this checkout's/);
    expect(await probeProvider(`http://127.0.0.1:${port}`)).toMatchObject({ pid: older.pid, code: "older" });

    writeFileSync(
      path.join(lab, "provider.json"),
      JSON.stringify({ pid: older.pid, port, database: databaseOf(databaseUrl) }),
    );
    const baseUrl = await ensureProvider(databaseUrl, port, lab);
    await older.exited;
    const started = await probeProvider(baseUrl);
    expect(started).toMatchObject({ code: sourceDigest(), database: databaseOf(databaseUrl) });
    expect(started).not.toMatchObject({ pid: older.pid });
  } finally {
    older.stop();
    await stopProvider(lab);
  }
});
