import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, inject, it } from "vitest";
import { databaseOf } from "../provider-sim/health";
import { providerFor } from "../../test/harness/provider";
import { ensureProvider, probeProvider, stopProvider } from "./provider-process-control";

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
