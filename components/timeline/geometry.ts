/**
 * The timeline's geometry, pure: which lanes are shown and in which rows (refused requests grouped under
 * the lane that held the lease), the time span drawn and its scale, each phase's bar and style, and the
 * keyboard's moves between bars. No React, no DOM: unit-tested in geometry.test.ts.
 */
import { isRefused, leaseEnd, outcomeKind, type Lane, type Phase } from "../../lib/lab/lane";
import { captionLines, charsIn } from "./words";
import type { ProviderCall } from "../../lib/provider-sim/lab-client";

export const laneHeight = 44;
export const barTop = 18;
export const barHeight = 18;
export const userHeight = 24;
/** A group's header holds its caption on two lines at most (a phone's width). */
export const groupHeight = 36;
export const axisHeight = 22;
/** In "fit" mode: the operations requested within this long of the latest one. */
export const fitSpanMs = 30_000;

const ms = (iso: string): number => Date.parse(iso);

/** A bar's styles, each drawn differently and named in the legend. */
export interface BarStyle {
  running: boolean;
  failed: boolean;
  /** Overlaps another operation's provider call on one account: the collision, in words. */
  collision: string | null;
  /** The provider carried the call out after the caller gave up. */
  appliedLate: boolean;
}

/** One thing on the picture the keyboard can stop at: a phase's bar, or a refusal's marker. */
export interface Item {
  /** Unique in the chart, usable as a DOM id's tail. */
  key: string;
  lane: Lane;
  phase: Phase;
  from: number;
  /** null while it runs: drawn up to "now". */
  to: number | null;
  style: BarStyle;
}

/** A set of lanes drawn together under one caption (a run's variant); `folded`: in one row. */
export interface LaneGroup {
  key: string;
  label: string;
  folded: boolean;
}

/** What a row shows, before it is placed. */
export type RowContent =
  | { kind: "user"; key: string; userId: string }
  | { kind: "group"; key: string; group: LaneGroup; count: number }
  | { kind: "lane"; key: string; lane: Lane; items: Item[] }
  /** Two or more requests refused while `holder` held the lease (null: no shown lane held it). */
  | { kind: "refused"; key: string; lanes: Lane[]; holder: Lane | null; items: Item[] }
  /** A folded group's lanes, all in one row. */
  | { kind: "folded"; key: string; lanes: Lane[]; items: Item[] };

/** A row placed on the picture: where it starts, how tall it is, its caption cut into lines. */
export type Row = RowContent & { top: number; height: number; lines: string[] };

export type ItemRow = Extract<Row, { items: Item[] }>;
export type HeaderRow = Extract<Row, { kind: "user" | "group" }>;

/** The rows a lane's marks can sit on: its own, or the row it shares with others. */
export const rowHolds = (row: ItemRow, operationId: string): boolean =>
  row.kind === "lane"
    ? row.lane.operationId === operationId
    : row.lanes.some((lane) => lane.operationId === operationId);

export interface Scale {
  from: number;
  to: number;
  width: number;
  x(at: number): number;
}

/** Time `from`..`to` onto `left`..`left + width` px, with `padFraction` of the span left free at both ends. */
export function timeScale(from: number, to: number, width: number, padFraction = 0, left = 0): Scale {
  const span = Math.max(1, to - from);
  const pad = span * padFraction;
  return { from, to, width, x: (at) => left + ((at - from + pad) / (span + 2 * pad)) * width };
}

/** The column on the left where each row's caption is written (its legend): a third of the picture, bounded. */
export const legendWidth = (width: number): number => Math.round(Math.min(320, Math.max(120, width * 0.32)));

/**
 * The provider phases whose call the provider applied after the caller gave up (the call log's
 * `applied-late`), as "operationId phase": the bar itself only knows that it timed out.
 */
const phaseOfCall: Record<string, string> = { DELETE: "unlink", POST: "link" };
export function appliedLate(calls: ProviderCall[]): Set<string> {
  return new Set(
    calls
      .filter((call) => call.outcome === "applied-late" && phaseOfCall[call.method])
      .map((call) => `${call.operationId} ${phaseOfCall[call.method]}`),
  );
}

/** Pairs of provider phases of different operations on one account that overlap in time: the collision. */
export function collisions(lanes: Lane[], now: number): Map<Phase, string> {
  const calls = lanes.flatMap((lane) =>
    lane.phases
      .filter((phase) => phase.accounts && phase.accounts.length > 0)
      .map((phase) => ({ lane, phase, from: ms(phase.startedAt), to: phase.endedAt ? ms(phase.endedAt) : now })),
  );
  const found = new Map<Phase, string>();
  for (const a of calls) {
    for (const b of calls) {
      if (a.lane === b.lane || a.from >= b.to || b.from >= a.to) continue;
      const account = a.phase.accounts!.find((each) => b.phase.accounts!.includes(each));
      if (account)
        found.set(a.phase, `collides with operation ${b.lane.operationId.slice(0, 8)}'s ${b.phase.name} on ${account}`);
    }
  }
  return found;
}

/** The lane whose lease held at `at` (else the one running then): the one a refusal at `at` lost to. */
export function holderAt(lanes: Lane[], at: number, now: number): Lane | null {
  const candidates = lanes.filter((lane) => !isRefused(lane));
  return (
    candidates.find((lane) => lane.lease && ms(lane.lease.acquiredAt) <= at && at <= leaseEnd(lane.lease)) ??
    candidates.find((lane) => ms(lane.requestedAt) <= at && at <= (lane.answeredAt ? ms(lane.answeredAt) : now)) ??
    null
  );
}

/** When a refused request was refused: its acquisition's start (its request, if it has none). */
const refusedAt = (lane: Lane): number =>
  ms(lane.phases.find((phase) => phase.name === "acquire")?.startedAt ?? lane.requestedAt);

/**
 * One user's lanes in drawing order: each lane that ran, followed by the requests refused while it held
 * the lease, as one group. A group of one is drawn as its lane (a double click shows both requests).
 */
export function orderLanes(lanes: Lane[], now: number): ({ lane: Lane } | { refused: Lane[]; holder: Lane | null })[] {
  const groups = new Map<string, { refused: Lane[]; holder: Lane | null }>();
  const order: ({ lane: Lane } | { group: string })[] = [];
  for (const lane of lanes) {
    if (!isRefused(lane)) {
      order.push({ lane });
      continue;
    }
    const holder = holderAt(lanes, refusedAt(lane), now);
    const key = holder?.operationId ?? "";
    const group = groups.get(key);
    if (group) group.refused.push(lane);
    else {
      groups.set(key, { refused: [lane], holder });
      // Right after its holder (the holder was requested first), else where the first refusal came.
      if (!holder) order.push({ group: key });
    }
  }
  return order.flatMap((entry) => {
    if ("group" in entry) return [group(groups.get(entry.group)!)];
    const after = groups.get(entry.lane.operationId);
    return after ? [entry, group(after)] : [entry];
  });
}

const group = ({ refused, holder }: { refused: Lane[]; holder: Lane | null }) =>
  refused.length === 1 ? { lane: refused[0]! } : { refused, holder };

function itemOf(lane: Lane, phase: Phase, index: number, collided: Map<Phase, string>, late: Set<string>): Item {
  const kind = outcomeKind(phase);
  return {
    key: `${lane.operationId}-${index}`,
    lane,
    phase,
    from: ms(phase.startedAt),
    to: phase.endedAt ? ms(phase.endedAt) : null,
    style: {
      running: kind === "running",
      failed: kind === "failed",
      collision: collided.get(phase) ?? null,
      appliedLate: late.has(`${lane.operationId} ${phase.name}`),
    },
  };
}

export interface LayoutInput {
  lanes: Lane[];
  /** The moment drawn as now, in ms on the lanes' clock. */
  now: number;
  /** null: fit the last operations; else the last that many ms. */
  windowMs: number | null;
  width: number;
  /** "operationId phase" of the provider calls applied late (see `appliedLate`). */
  late?: Set<string>;
  /** The group a lane is drawn in (a run's variant), in the order the lanes come; without: by user. */
  groupOf?: (lane: Lane) => LaneGroup;
  /** A moment the fitted picture reaches at least (a mark after the last lane); 0: none. */
  until?: number;
  /** Fit every lane (a saved run's, however long it took), not only the last `fitSpanMs` of them. */
  everyLane?: boolean;
  /**
   * Each row's caption: a lane's wrapped in the legend column on the left, clear of its bars and marks at any
   * width; a header's across the picture.
   */
  caption?: (row: RowContent) => string;
}

export interface Layout {
  rows: Row[];
  scale: Scale;
  /** Times on the axis are given from here: the first shown request (fit), or the window's start. */
  origin: number;
  height: number;
  /** How many lanes are drawn (a refused group counts all its requests). */
  shown: number;
  /** Where the plot starts: left of it, each row's caption. */
  plotLeft: number;
}

/**
 * How far the picture reaches while something runs: a little past now, so "now" can move for a while
 * (each animation frame) before the picture must be laid out again.
 */
export const horizon = (now: number, span: number): number => now + Math.max(500, span * 0.25);

/** The time span drawn, right of the legend column: fit to the lanes, or the window up to now. */
function scaleFor(shownLanes: Lane[], input: LayoutInput): { scale: Scale; origin: number } {
  const { now, windowMs, width, until = 0 } = input;
  const left = legendWidth(width);
  const plotWidth = width - left;
  // Room at both ends for a mark's circle (11 px), however narrow the plot.
  const pad = Math.max(0.03, 14 / Math.max(1, plotWidth));
  const running = shownLanes.some((lane) => lane.answeredAt === null);
  if (windowMs !== null) {
    const to = running ? horizon(now, windowMs / 2) : now;
    return { scale: timeScale(to - windowMs, to, plotWidth, 0, left), origin: to - windowMs };
  }
  const ends = shownLanes.flatMap((lane) => [
    lane.answeredAt ? ms(lane.answeredAt) : now,
    ...(lane.lease ? [leaseEnd(lane.lease)] : []),
  ]);
  const first = Math.min(...shownLanes.map((lane) => ms(lane.requestedAt)));
  const to = Math.max(...ends, until);
  const end = running ? horizon(Math.max(to, now), to - first) : to;
  return { scale: timeScale(first, end, plotWidth, pad, left), origin: first };
}

/** The lanes in sections, each under its header: by group when `groupOf` is given, else by user. */
function sections(lanes: Lane[], groupOf: LayoutInput["groupOf"]) {
  const found = new Map<string, { header: LaneGroup | string; lanes: Lane[] }>();
  for (const lane of lanes) {
    const group = groupOf?.(lane);
    const key = group ? `group-${group.key}` : `user-${lane.userId}`;
    const section = found.get(key) ?? { header: group ?? lane.userId, lanes: [] };
    section.lanes.push(lane);
    found.set(key, section);
  }
  return [...found.entries()].map(([key, section]) => ({ key, ...section }));
}

export function layoutTimeline(input: LayoutInput): Layout {
  const { lanes, now, windowMs, late = new Set() } = input;
  const latest = Math.max(0, ...lanes.map((lane) => ms(lane.requestedAt)));
  const shownLanes = lanes.filter((lane) =>
    windowMs === null
      ? input.everyLane || ms(lane.requestedAt) >= latest - fitSpanMs
      : (lane.answeredAt ? ms(lane.answeredAt) : now) >= now - windowMs,
  );
  const { scale, origin } = scaleFor(shownLanes, input);
  const collided = collisions(shownLanes, now);
  const items = (lane: Lane) => lane.phases.map((phase, index) => itemOf(lane, phase, index, collided, late));
  const contents: RowContent[] = sections(shownLanes, input.groupOf).flatMap((section) => {
    const { header } = section;
    const head: RowContent =
      typeof header === "string"
        ? { kind: "user", key: section.key, userId: header }
        : { kind: "group", key: section.key, group: header, count: section.lanes.length };
    const folded = typeof header !== "string" && header.folded;
    return [head, ...(folded ? [foldedRow(section, items)] : laneRows(section.lanes, now, items))];
  });
  const rows: Row[] = [];
  let top = axisHeight;
  for (const content of contents) {
    const row = placed(content, top, input);
    rows.push(row);
    top += row.height;
  }
  return { rows, scale, origin, height: top + 4, shown: shownLanes.length, plotLeft: legendWidth(input.width) };
}

/**
 * A row at `top`, its caption cut into lines: a lane's in the legend column (as many lines as it takes, the
 * row growing past three), a group's across the picture (up to three), a user's on one.
 */
function placed(content: RowContent, top: number, input: LayoutInput): Row {
  const text = input.caption?.(content) ?? "";
  const header = content.kind === "user" || content.kind === "group";
  const room = (header ? input.width : legendWidth(input.width)) - 10;
  const lines = captionLines(text, charsIn(room, header ? 12.5 : 11), content.kind === "user" ? 1 : header ? 3 : 8);
  const height =
    content.kind === "user"
      ? userHeight
      : content.kind === "group"
        ? Math.max(groupHeight, 24 + 14 * lines.length - 4)
        : Math.max(laneHeight, 12 * lines.length + 8);
  return { ...content, top, height, lines } as Row;
}

const foldedRow = (section: { key: string; lanes: Lane[] }, items: (lane: Lane) => Item[]): RowContent => ({
  kind: "folded",
  key: `${section.key}-folded`,
  lanes: section.lanes,
  items: section.lanes.flatMap(items),
});

/** A section's lanes as rows: each lane that ran, then the requests refused while it held the lease. */
function laneRows(lanes: Lane[], now: number, items: (lane: Lane) => Item[]): RowContent[] {
  return orderLanes(lanes, now).map((entry) =>
    "lane" in entry
      ? { kind: "lane", key: entry.lane.operationId, lane: entry.lane, items: items(entry.lane) }
      : {
          kind: "refused",
          key: `refused-${entry.holder?.operationId ?? entry.refused[0]!.userId}`,
          lanes: entry.refused,
          holder: entry.holder,
          items: entry.refused.flatMap(items),
        },
  );
}

/** Round-numbered ticks, about one per 120 px, from `origin` on. */
export function tickMarks(scale: Scale, origin: number): number[] {
  const wanted = Math.max(2, Math.floor(scale.width / 120));
  const raw = (scale.to - scale.from) / wanted;
  const step =
    [10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000].find((each) => each >= raw) ?? 60_000;
  const ticks: number[] = [];
  for (let tick = origin; tick <= scale.to; tick += step) if (tick >= scale.from) ticks.push(tick);
  return ticks;
}

/** Where the keyboard stands: a row (of those with items) and an item in it. */
export interface Cursor {
  row: number;
  item: number;
}

export type MoveKey = "ArrowLeft" | "ArrowRight" | "ArrowUp" | "ArrowDown" | "Home" | "End";

export const isMoveKey = (key: string): key is MoveKey =>
  ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End"].includes(key);

/**
 * The keyboard's moves: left and right step through a row's items in time (on past its ends into the
 * next or previous row), up and down go to the nearest item in time of the row above or below, Home and
 * End to the first and last. Without a cursor, any move starts at the first item.
 */
export function move(rows: ItemRow[], cursor: Cursor | null, key: MoveKey): Cursor | null {
  const filled = rows.map((row) => row.items.length);
  const firstRow = filled.findIndex((count) => count > 0);
  if (firstRow < 0) return null;
  const lastRow = filled.findLastIndex((count) => count > 0);
  if (!cursor || !rows[cursor.row]?.items[cursor.item]) return { row: firstRow, item: 0 };
  const { row, item } = cursor;
  const rowWith = (from: number, step: 1 | -1): number => {
    for (let index = from + step; index >= 0 && index < rows.length; index += step)
      if (filled[index]! > 0) return index;
    return -1;
  };
  switch (key) {
    case "Home":
      return { row: firstRow, item: 0 };
    case "End":
      return { row: lastRow, item: filled[lastRow]! - 1 };
    case "ArrowRight": {
      if (item + 1 < filled[row]!) return { row, item: item + 1 };
      const next = rowWith(row, 1);
      return next < 0 ? cursor : { row: next, item: 0 };
    }
    case "ArrowLeft": {
      if (item > 0) return { row, item: item - 1 };
      const previous = rowWith(row, -1);
      return previous < 0 ? cursor : { row: previous, item: filled[previous]! - 1 };
    }
    case "ArrowUp":
    case "ArrowDown": {
      const other = rowWith(row, key === "ArrowDown" ? 1 : -1);
      if (other < 0) return cursor;
      const at = rows[row]!.items[item]!.from;
      const items = rows[other]!.items;
      let nearest = 0;
      items.forEach((each, index) => {
        if (Math.abs(each.from - at) < Math.abs(items[nearest]!.from - at)) nearest = index;
      });
      return { row: other, item: nearest };
    }
  }
}
