import { describe, expect, it } from "vitest";
import type { Lane } from "../../lib/lab/lane";
import type { RunRecord, RunSnapshot } from "../../lib/lab/experiments/runs";
import { factIndexAt, leaseRowAt, spanOf } from "./replay";

const t0 = Date.parse("2026-12-01T10:00:00.000Z");
const at = (offsetMs: number): string => new Date(t0 + offsetMs).toISOString();

const lane = (id: string, from: number, to: number, lease: Lane["lease"]): Lane => ({
  operationId: `${id}-0000-0000-0000-000000000000`,
  userId: "ada",
  instance: "1",
  strategy: "lease",
  toIdentityId: "github|8812",
  requestedAt: at(from),
  answeredAt: at(to),
  status: 200,
  problemType: null,
  phases: [],
  lease,
});

const read = (offsetMs: number, lease: RunSnapshot["lease"], audit: RunSnapshot["audit"] = null): RunSnapshot => ({
  at: at(offsetMs),
  accounts: [],
  localPrimaryIdentityId: null,
  lease,
  audit,
});

// q4's mapped lock column: the rename's save wiped the first switch's lease (its lane still shows it to its expiry);
// the second switch took the row (fence 1 again) and released it.
const first = lane("aaaaaaaa", 0, 2_000, { acquiredAt: at(5), expiresAt: at(10_005), releasedAt: null, fence: "1" });
const second = lane("bbbbbbbb", 300, 1_900, {
  acquiredAt: at(305),
  expiresAt: at(10_305),
  releasedAt: at(1_900),
  fence: "1",
});
const run = {
  id: "run",
  experimentId: "q4-lock-column-mapped",
  startedAt: at(-10),
  endedAt: at(2_500),
  verdict: "as-expected",
  explanation: "",
  steps: [
    { n: 1, at: at(200), operationId: first.operationId, text: "first switch: its lease is gone" },
    { n: 2, at: at(2_300), operationId: second.operationId, text: "second switch: afterwards the audit finds …" },
  ],
  variants: [
    {
      label: "mapped lock column",
      startedAt: at(-10),
      endedAt: at(2_200),
      operationIds: [first.operationId, second.operationId],
    },
  ],
  lanes: [first, second],
  history: [],
  snapshots: [
    read(-5, { held: false, expiresAt: null, fence: "0" }),
    read(2_000, { held: false, expiresAt: null, fence: "1" }),
    read(2_300, { held: false, expiresAt: null, fence: "1" }, { consistent: false, violations: ["split"] }),
  ],
  observed: {},
  imported: false,
} as RunRecord;

describe("a saved run at one moment", () => {
  it("takes the lease row from the lanes between reads, and from the last read when it is newer", () => {
    expect(leaseRowAt(run, t0 + 100)).toMatchObject({ held: true, holder: first, fence: "1", readAt: null });
    expect(leaseRowAt(run, t0 + 1_000)).toMatchObject({ held: true, readAt: null });
    // Read after the second switch released it: free, though the first switch's band runs to its expiry.
    expect(leaseRowAt(run, t0 + 2_100)).toEqual({
      held: false,
      holder: null,
      fence: null,
      expiresAt: null,
      readAt: at(2_000),
    });
  });

  it("spans the run to the last thing it recorded, and tells which fact a moment has reached", () => {
    // To the first lease's expiry: its band is drawn there, past the last read.
    expect(spanOf(run)).toEqual({ from: t0, to: t0 + 10_005 });
    expect(factIndexAt(run.steps, t0 + 100)).toBeNull();
    expect(factIndexAt(run.steps, t0 + 200)).toBe(0);
    expect(factIndexAt(run.steps, t0 + 2_300)).toBe(1);
  });
});
