import { describe, expect, it } from "vitest";
import { freshLabEachTest } from "./fresh-lab";

/**
 * A settings change answered is in force wherever the next request lands: on the one app, and behind the
 * balancer (the `production` project), on either instance and at the simulated provider.
 */
const { app, session } = freshLabEachTest({ strategy: "lease", reconcileAfterMs: null, provider: { latencyMs: 20 } });

describe("a settings change, once answered, is in force everywhere", () => {
  it("the next reads answer it, whichever instance they land on: 20 changes in a row", async () => {
    for (let round = 1; round <= 20; round++) {
      const changed = await app.configure({ leaseTtlMs: 5_000 + round });
      // Behind the balancer, two reads in a row land on the two instances.
      expect((await app.get("/api/lab")).body).toEqual(changed);
      expect((await app.get("/api/lab")).body).toEqual(changed);
    }
  });

  it("the next switch plays a provider script set just before it: 6 in a row", async () => {
    for (let round = 0; round < 6; round++) {
      await app.configure({ provider: { script: { unlink: ["500"] } } });
      const answer = await session.ada.promote("ada", "github|8812");
      expect(answer.status, JSON.stringify(answer.body)).toBe(502);
      expect(answer.body).toMatchObject({ step: "unlink" });
    }
    expect((await app.userAudit("ada")).consistent).toBe(true);
  });
});
