import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startBalancedPair, type BalancedPair } from "./harness/balanced-pair";
import type { AppClient } from "./harness/http-client";

const balancerPort = Number(process.env.BALANCER_PORT ?? 3240);
let pair: BalancedPair;
let balanced: AppClient;

beforeAll(async () => {
  pair = await startBalancedPair({ databaseUrl: inject("databaseUrl"), balancerPort });
  balanced = pair.balanced;
  await balanced.reset();
});

afterAll(() => pair?.stop());

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

  // Last: it kills the second instance.
  it("an instance killed under load: the other answers all within 1.5 s; nothing HAProxy answers itself is HTML", async () => {
    const answers: {
      at: number;
      status: number;
      instance: string | null;
      type: string | null;
      retryAfter: string | null;
    }[] = [];
    // A request the dead instance never answered is sent to the other (HAProxy's retry); one it had begun to
    // answer cannot be: its answer is cut (the client sees the connection close mid-answer).
    let unanswered = 0;
    let cut = 0;
    const started = performance.now();
    let killedAt = Infinity;
    const reader = async () => {
      while (performance.now() - started < 4_000) {
        const answer = await fetch(`${pair.balancerUrl}/api/lab/instances`).catch(() => null);
        if (!answer) {
          unanswered++;
          continue;
        }
        if (
          !(await answer.arrayBuffer().then(
            () => true,
            () => false,
          ))
        )
          cut++;
        answers.push({
          at: performance.now(),
          status: answer.status,
          instance: answer.headers.get("X-Lab-Instance"),
          type: answer.headers.get("content-type"),
          retryAfter: answer.headers.get("retry-after"),
        });
      }
    };
    const readers = Array.from({ length: 4 }, reader);
    await new Promise((resolve) => setTimeout(resolve, 500));
    killedAt = performance.now();
    await pair.apps[1]!.kill();
    await Promise.all(readers);
    expect(unanswered).toBe(0);
    // At most one answer in flight per reader when the instance died.
    expect(cut).toBeLessThanOrEqual(4);
    for (const answer of answers.filter((each) => each.status !== 200)) {
      expect(answer.type).toBe("application/problem+json");
      expect(answer.retryAfter).toMatch(/^\d+$/);
    }
    const settled = answers.filter((answer) => answer.at > killedAt + 1_500);
    expect(settled.length).toBeGreaterThan(0);
    for (const answer of settled) expect([answer.status, answer.instance]).toEqual([200, "1"]);
  });
});
