import { describe, expect, it } from "vitest";
import { lanesAsOf, outcomeKind, type Lane, type Phase } from "../../lib/lab/lane";
import { captionLines } from "./words";
import {
  appliedLate,
  collisions,
  holderAt,
  horizon,
  layoutTimeline,
  move,
  orderLanes,
  tickMarks,
  timeScale,
  type ItemRow,
} from "./geometry";

const t0 = Date.parse("2026-12-01T10:00:00.000Z");
const at = (offsetMs: number): string => new Date(t0 + offsetMs).toISOString();

function phase(name: Phase["name"], from: number, to: number | null, outcome: Phase["outcome"], accounts?: string[]) {
  return { name, startedAt: at(from), endedAt: to === null ? null : at(to), outcome, detail: null, accounts };
}

function lane(id: string, from: number, to: number | null, phases: Phase[], lease: Lane["lease"] = null): Lane {
  return {
    operationId: `${id}-0000-0000-0000-000000000000`,
    userId: "ada",
    instance: "1",
    strategy: "lease",
    toIdentityId: "github|8812",
    requestedAt: at(from),
    answeredAt: to === null ? null : at(to),
    status: to === null ? null : 200,
    problemType: null,
    phases,
    lease,
  };
}

/** A switch that won the lease at `from`, and released it at `releasedAt` (its TTL: 10 s). */
const winner = (id: string, from: number, releasedAt: number): Lane =>
  lane(
    id,
    from,
    releasedAt + 5,
    [phase("acquire", from, from + 5, "won"), phase("unlink", from + 5, from + 400, "200", ["github|8812"])],
    { acquiredAt: at(from + 5), expiresAt: at(from + 10_005), releasedAt: at(releasedAt), fence: "1" },
  );

const refused = (id: string, from: number): Lane => ({
  ...lane(id, from, from + 10, [phase("acquire", from, from + 5, "refused")]),
  status: 409,
  problemType: "https://lease-lock-lab.test/problems/operation-in-progress",
});

describe("outcomeKind (no pattern matching: the lane model's words)", () => {
  it("tells running, ok and failed phases apart, provider statuses by their class", () => {
    expect(outcomeKind(phase("link", 0, null, null))).toBe("running");
    expect(outcomeKind(phase("link", 0, 1, "201"))).toBe("ok");
    expect(outcomeKind(phase("link", 0, 1, "404"))).toBe("failed");
    expect(outcomeKind(phase("link", 0, 1, "timeout"))).toBe("failed");
    expect(outcomeKind(phase("acquire", 0, 1, "took-over"))).toBe("ok");
    expect(outcomeKind(phase("acquire", 0, 1, "refused"))).toBe("failed");
    expect(outcomeKind(phase("release", 0, 1, "kept"))).toBe("ok");
    expect(outcomeKind(phase("release", 0, 1, "unfinished"))).toBe("failed");
  });
});

describe("timeScale", () => {
  it("maps the span onto the width, leaving the padding free at both ends", () => {
    const scale = timeScale(1_000, 2_000, 500);
    expect(scale.x(1_000)).toBe(0);
    expect(scale.x(1_500)).toBe(250);
    expect(scale.x(2_000)).toBe(500);
    const padded = timeScale(0, 1_000, 120, 0.1);
    expect(padded.x(0)).toBe(10);
    expect(padded.x(1_000)).toBe(110);
  });

  it("does not divide by zero for a single moment", () => {
    expect(Number.isFinite(timeScale(5, 5, 100).x(5))).toBe(true);
  });
});

describe("refused requests", () => {
  it("find the lane that held the lease when they were refused", () => {
    const first = winner("aaaaaaaa", 0, 1_000);
    const second = winner("bbbbbbbb", 2_000, 3_000);
    const lanes = [first, second, refused("cccccccc", 500), refused("dddddddd", 2_500)];
    expect(holderAt(lanes, t0 + 500, t0 + 10_000)).toBe(first);
    expect(holderAt(lanes, t0 + 2_500, t0 + 10_000)).toBe(second);
    expect(holderAt(lanes, t0 + 1_500, t0 + 10_000)).toBeNull();
  });

  it("share one row per holder, right after it; a lone refusal keeps its own lane", () => {
    const holder = winner("aaaaaaaa", 0, 1_000);
    const burst = Array.from({ length: 9 }, (_, index) => refused(`${index}0000000`, 10 + index));
    const later = winner("bbbbbbbb", 2_000, 3_000);
    const lone = refused("eeeeeeee", 2_100);
    const order = orderLanes([holder, ...burst, later, lone], t0 + 10_000);
    expect(order).toEqual([{ lane: holder }, { refused: burst, holder }, { lane: later }, { lane: lone }]);
  });

  it("are laid out as one row for a burst of 49, with a marker each", () => {
    const holder = winner("aaaaaaaa", 0, 1_000);
    const burst = Array.from({ length: 49 }, (_, index) => refused(`${String(index).padStart(2, "0")}000000`, 20));
    const layout = layoutTimeline({ lanes: [holder, ...burst], now: t0 + 2_000, windowMs: null, width: 800 });
    const kinds = layout.rows.map((row) => row.kind);
    expect(kinds).toEqual(["user", "lane", "refused"]);
    expect((layout.rows[2] as ItemRow).items).toHaveLength(49);
    expect(layout.shown).toBe(50);
    // Three rows, not fifty: the picture stays a screen tall.
    expect(layout.height).toBeLessThan(200);
  });
});

describe("layoutTimeline", () => {
  it("draws a released lease to its release, and back-to-back leases side by side", () => {
    const first = winner("aaaaaaaa", 0, 1_000);
    const second = winner("bbbbbbbb", 1_010, 2_000);
    const layout = layoutTimeline({ lanes: [first, second], now: t0 + 5_000, windowMs: null, width: 1_000 });
    // Fit: from the first request to the last lease's end (its release, not its 10 s TTL), padded.
    expect(layout.scale.from).toBe(t0);
    expect(layout.scale.to).toBe(t0 + 2_005);
    expect(layout.origin).toBe(t0);
  });

  it("reaches past now while something runs, so now can move before the next layout", () => {
    const running = lane("aaaaaaaa", 0, null, [phase("unlink", 0, null, null, ["github|8812"])]);
    const now = t0 + 1_000;
    const layout = layoutTimeline({ lanes: [running], now, windowMs: null, width: 1_000 });
    expect(layout.scale.to).toBe(horizon(now, 1_000));
    expect(layout.scale.to).toBeGreaterThan(now);
    const bar = (layout.rows[1] as ItemRow).items[0]!;
    expect(bar.to).toBeNull();
    expect(bar.style.running).toBe(true);
  });

  it("shows the last windowMs in a window, and leaves out what ended before it", () => {
    const old = winner("aaaaaaaa", 0, 1_000);
    const recent = winner("bbbbbbbb", 50_000, 51_000);
    const layout = layoutTimeline({ lanes: [old, recent], now: t0 + 55_000, windowMs: 10_000, width: 1_000 });
    expect(layout.shown).toBe(1);
    expect(layout.scale.to - layout.scale.from).toBe(10_000);
  });

  it("marks collisions and calls applied late on their bars", () => {
    const a = lane("aaaaaaaa", 0, 1_000, [phase("unlink", 100, 900, "200", ["auth0|ada", "github|8812"])]);
    const b = lane("bbbbbbbb", 50, 1_000, [phase("unlink", 200, 950, "404", ["auth0|ada", "github|8812"])]);
    const c = lane("cccccccc", 2_000, 3_000, [phase("link", 2_100, 2_900, "timeout", ["apple|ada"])]);
    const found = collisions([a, b, c], t0 + 5_000);
    expect(found.get(a.phases[0]!)).toBe("collides with operation bbbbbbbb's unlink on auth0|ada");
    expect(found.has(c.phases[0]!)).toBe(false);
    const late = appliedLate([
      {
        id: "1",
        at: at(4_000),
        method: "POST",
        path: "/x",
        status: 201,
        operationId: c.operationId,
        durationMs: 5,
        outcome: "applied-late",
      },
    ]);
    const layout = layoutTimeline({ lanes: [a, b, c], now: t0 + 5_000, windowMs: null, width: 1_000, late });
    const items = layout.rows.flatMap((row) => ("items" in row ? row.items : []));
    expect(items.map((item) => [item.style.collision !== null, item.style.appliedLate, item.style.failed])).toEqual([
      [true, false, false],
      [true, false, true],
      [false, true, true],
    ]);
  });
});

describe("layoutTimeline for a saved run", () => {
  const groupOf = (lane: Lane) => {
    const first = lane.operationId.startsWith("a") || lane.operationId.startsWith("b");
    return { key: first ? "0" : "1", label: first ? "1 · sampled" : "2 · the crash", folded: first };
  };

  it("draws each group under its caption, in order; a folded group's lanes in one row", () => {
    const lanes = [winner("aaaaaaaa", 0, 100), winner("bbbbbbbb", 200, 300), winner("cccccccc", 400, 500)];
    const layout = layoutTimeline({
      lanes,
      now: t0 + 1_000,
      windowMs: null,
      width: 1_000,
      groupOf,
    });
    expect(layout.rows.map((row) => row.kind)).toEqual(["group", "folded", "group", "lane"]);
    const [first, folded, second] = layout.rows;
    expect(first).toMatchObject({ kind: "group", group: { label: "1 · sampled" }, count: 2 });
    expect((folded as ItemRow).items).toHaveLength(4);
    expect(second).toMatchObject({ group: { label: "2 · the crash" } });
  });

  it("fits every lane, however long the run took, and plots them right of the legend column", () => {
    const lanes = [winner("aaaaaaaa", 0, 100), winner("cccccccc", 40_000, 40_100)];
    const live = layoutTimeline({ lanes, now: t0 + 41_000, windowMs: null, width: 1_000 });
    expect(live.shown).toBe(1);
    const replay = layoutTimeline({ ...{ lanes, now: t0 + 41_000, windowMs: null, width: 1_000 }, everyLane: true });
    expect(replay.shown).toBe(2);
    expect(replay.plotLeft).toBe(320);
    expect(replay.scale.x(replay.scale.from)).toBeGreaterThan(replay.plotLeft);
    expect(replay.scale.x(replay.scale.to)).toBeLessThan(1_000);
  });

  it("cuts each lane's caption into lines in the legend column, the row growing past three, at a phone's width too", () => {
    const lanes = [winner("cccccccc", 0, 100)];
    const caption = () => "a caption long enough to need more than three lines in a column a third of 600 px wide";
    for (const width of [600, 358]) {
      const layout = layoutTimeline({ lanes, now: t0, windowMs: null, width, caption });
      const lane = layout.rows.find((row) => row.kind === "lane")!;
      expect(lane.lines.length).toBeGreaterThan(3);
      expect(lane.height).toBe(12 * lane.lines.length + 8);
      expect(lane.lines.join("")).toBe(caption());
      // Every bar starts right of the column, so no caption is drawn under a bar or a mark.
      expect(layout.scale.x(layout.scale.from)).toBeGreaterThan(layout.plotLeft);
    }
  });

  it("reaches a mark after the last lane (the audit read as the run ended)", () => {
    const lanes = [winner("cccccccc", 0, 100)];
    const layout = layoutTimeline({ lanes, now: t0, windowMs: null, width: 800, until: t0 + 20_000 });
    expect(layout.scale.to).toBe(t0 + 20_000);
  });
});

describe("tickMarks", () => {
  it("counts from the origin in round steps, about one per 120 px", () => {
    const ticks = tickMarks(timeScale(t0, t0 + 2_000, 600), t0);
    expect(ticks).toEqual([t0, t0 + 500, t0 + 1_000, t0 + 1_500, t0 + 2_000]);
  });
});

describe("move (the keyboard)", () => {
  const holder = winner("aaaaaaaa", 0, 1_000);
  const other = winner("bbbbbbbb", 2_000, 3_000);
  const layout = layoutTimeline({ lanes: [holder, other], now: t0 + 5_000, windowMs: null, width: 1_000 });
  const rows = layout.rows.filter((row): row is ItemRow => row.kind !== "user");

  it("starts at the first bar, steps right into the next lane and stops at the last", () => {
    expect(move(rows, null, "ArrowRight")).toEqual({ row: 0, item: 0 });
    expect(move(rows, { row: 0, item: 0 }, "ArrowRight")).toEqual({ row: 0, item: 1 });
    expect(move(rows, { row: 0, item: 1 }, "ArrowRight")).toEqual({ row: 1, item: 0 });
    expect(move(rows, { row: 1, item: 1 }, "ArrowRight")).toEqual({ row: 1, item: 1 });
    expect(move(rows, { row: 1, item: 0 }, "ArrowLeft")).toEqual({ row: 0, item: 1 });
    expect(move(rows, { row: 0, item: 0 }, "ArrowLeft")).toEqual({ row: 0, item: 0 });
  });

  it("goes up and down to the nearest bar in time, Home and End to the ends", () => {
    expect(move(rows, { row: 0, item: 1 }, "ArrowDown")).toEqual({ row: 1, item: 0 });
    expect(move(rows, { row: 1, item: 1 }, "ArrowUp")).toEqual({ row: 0, item: 1 });
    expect(move(rows, { row: 0, item: 0 }, "ArrowUp")).toEqual({ row: 0, item: 0 });
    expect(move(rows, { row: 1, item: 1 }, "Home")).toEqual({ row: 0, item: 0 });
    expect(move(rows, { row: 0, item: 0 }, "End")).toEqual({ row: 1, item: 1 });
  });

  it("has nowhere to go without bars", () => {
    expect(move([], null, "ArrowRight")).toBeNull();
  });
});

describe("lanesAsOf (a replay's moment)", () => {
  it("leaves out what had not happened and reopens what was still running", () => {
    const switched = winner("aaaaaaaa", 0, 1_000);
    const [asOf] = lanesAsOf([switched, winner("bbbbbbbb", 2_000, 3_000)], t0 + 200);
    expect(asOf).toMatchObject({ answeredAt: null, status: null });
    expect(asOf!.phases.map((each) => [each.name, each.outcome])).toEqual([
      ["acquire", "won"],
      ["unlink", null],
    ]);
    expect(asOf!.lease?.releasedAt).toBeNull();
    expect(lanesAsOf([switched], t0 + 2_000)).toEqual([switched]);
  });
});

describe("captionLines (the legend column)", () => {
  it("cuts at spaces, keeps each cut's space so the lines read as the caption, and ends a longer one in …", () => {
    expect(captionLines("first switch (pauses 1200 ms) · 200", 16, 3)).toEqual([
      "first switch ",
      "(pauses 1200 ms) ",
      "· 200",
    ]);
    expect(captionLines("first switch (pauses 1200 ms) · 200", 16, 2)).toEqual(["first switch ", "(pauses 1200 ms…"]);
    expect(captionLines("short", 16, 3)).toEqual(["short"]);
  });
});
