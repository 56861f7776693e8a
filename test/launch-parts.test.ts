import { spawn } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..");

it("asking for a part that is not installed prints the one command that installs it, and exits 1 without a stack trace", async () => {
  // An empty PATH: redis-server (in /usr/bin) cannot be found.
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/launch.ts", "start", "--redis"], {
    cwd: root,
    env: { ...process.env, PATH: "/nonexistent" },
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise((resolve) => child.once("exit", resolve));
  expect(code).toBe(1);
  expect(output.trim()).toBe(
    `[launch] redis-server is not installed. Install it with: ${process.getuid?.() === 0 ? "" : "sudo "}apt-get install -y redis-server`,
  );
});
