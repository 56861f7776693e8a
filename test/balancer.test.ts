import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startHaproxy } from "../scripts/parts/haproxy";
import type { RunningPart } from "../scripts/parts/part-process";
import { startApp, type RunningApp } from "./harness/app-server";
import { appClient, type AppClient } from "./harness/http-client";

// Two app instances behind the system's HAProxy, round-robin on one public port, as
// `npm run dev -- --instances 2 --balance --port P` runs them (the instances on the ports after P).
const balancerPort = Number(process.env.BALANCER_PORT ?? 3240);
const instancePorts = [balancerPort + 1, balancerPort + 2];
let haproxy: RunningPart;
let apps: RunningApp[] = [];
let balanced: AppClient;

beforeAll(async () => {
  const urls = instancePorts.map((port) => `http://127.0.0.1:${port}`);
  apps = await Promise.all(
    instancePorts.map((port, index) =>
      startApp({
        databaseUrl: inject("databaseUrl"),
        port,
        env: {
          LAB_INSTANCE: String(index + 1),
          LAB_PEER_URLS: urls.filter((_, other) => other !== index).join(","),
          LAB_BALANCER_URL: `http://127.0.0.1:${balancerPort}`,
        },
      }),
    ),
  );
  haproxy = await startHaproxy(balancerPort, instancePorts);
  balanced = appClient(`http://127.0.0.1:${balancerPort}`);
  // The balancer's health checks see both instances up before the tests send anything.
  for (let waited = 0; waited < 10_000; waited += 100) {
    const served = await Promise.all(
      [1, 2, 3, 4].map(async () => (await balanced.get("/api/lab/instances")).body.instance),
    );
    if (new Set(served).size === 2) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await balanced.reset();
});

afterAll(async () => {
  await haproxy?.stop();
  await Promise.all(apps.map((app) => app.stop()));
});

describe("two instances behind HAProxy", () => {
  it("round-robins the requests, and each answer says which instance served it", async () => {
    const answers = [];
    for (let request = 0; request < 6; request++) answers.push(await balanced.get("/api/lab/instances"));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.headers.get("X-Lab-Instance")).toBe(answer.body.instance);
      expect(answer.body.balancer).toBe(`http://127.0.0.1:${balancerPort}`);
    }
    const served = answers.map((answer) => answer.body.instance);
    expect(new Set(served)).toEqual(new Set(["1", "2"]));
    // Round-robin: never the same instance twice in a row.
    for (let index = 1; index < served.length; index++) expect(served[index]).not.toBe(served[index - 1]);
  });

  it("two clicks at once, one per instance, 10 rounds: one switch wins each round, the other is refused", async () => {
    const ada = await balanced.signedIn("ada");
    const targets = ["github|8812", "google-oauth2|104423"];
    const servedBy = new Set<string | null>();
    for (let round = 0; round < 10; round++) {
      const target = targets[round % 2]!;
      const clicks = await Promise.all([ada.promote("ada", target), ada.promote("ada", target)]);
      clicks.forEach((click) => servedBy.add(click.headers.get("X-Lab-Instance")));
      expect(clicks.map((click) => click.status).sort()).toEqual([200, 409]);
      await expect.poll(() => ada.leaseHeld("ada")).toBe(false);
    }
    expect(servedBy).toEqual(new Set(["1", "2"]));
    expect((await balanced.audit()).consistent).toBe(true);
  });
});
