/**
 * `npm run dev` / `npm start`: finds or starts the database (a process of its own, which outlives this
 * one), migrates and seeds it, then runs Next.js with DATABASE_URL pointing at it.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { prepareDatabase } from "../db/prepare";

const [mode = "dev", ...nextArgs] = process.argv.slice(2);
if (mode !== "dev" && mode !== "start") throw new Error(`usage: launch dev|start [next options]`);

const databaseUrl = await prepareDatabase(process.env.LAB_DATABASE ?? "leaselab");
console.log(`[launch] database ready: ${new URL(databaseUrl).host}${new URL(databaseUrl).pathname}`);

const next = spawn(process.execPath, [fileURLToPath(import.meta.resolve("next/dist/bin/next")), mode, ...nextArgs], {
  stdio: "inherit",
  env: { ...process.env, DATABASE_URL: databaseUrl },
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => next.kill(signal));
next.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
