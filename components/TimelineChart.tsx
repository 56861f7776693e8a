"use client";

import { useEffect, useId, useMemo, useRef, useState } from "react";
import { lanesAsOf, leaseEnd, releasedInTime, type Lane } from "@/lib/lab/lane";
import {
  appliedLate,
  barHeight,
  barTop,
  isMoveKey,
  layoutTimeline,
  laneHeight,
  move,
  tickMarks,
  type Item,
  type ItemRow,
  type Layout,
  type Row,
} from "./timeline/geometry";
import type { TimelineChartProps } from "./timeline/props";
import { describeItem, keptRelease, laneLabel, refusedLabel, seconds } from "./timeline/words";

export type { TimelineChartProps, TimelineMark } from "./timeline/props";

const ms = (iso: string): number => Date.parse(iso);

/** The latest moment the lanes mention: "now" as far as the data knows, without reading a clock. */
const latestStamp = (lanes: Lane[]): number =>
  Math.max(
    0,
    ...lanes.flatMap((lane) => [
      ms(lane.requestedAt),
      ...(lane.answeredAt ? [ms(lane.answeredAt)] : []),
      ...lane.phases.flatMap((phase) => [ms(phase.startedAt), ...(phase.endedAt ? [ms(phase.endedAt)] : [])]),
    ]),
  );

function useWidth<T extends Element>(): [React.RefObject<T | null>, number] {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(800);
  useEffect(() => {
    if (!ref.current) return;
    const observer = new ResizeObserver(([entry]) => setWidth(Math.floor(entry!.contentRect.width)));
    observer.observe(ref.current);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

/**
 * Every operation as a swimlane, time running left to right: its phases as bars, its lease as a band
 * from its acquisition to its release or expiry (whichever came first), collisions at the provider
 * marked. Requests refused while another held the lease share one lane.
 *
 * Drawn again only when the lanes change; while one runs, an animation frame moves "now" (the running
 * bars' ends and the now line) without drawing the rest, until now passes the picture's horizon.
 * The chart is one tab stop: arrow keys move between bars, and the focused one is described in words.
 */
export function TimelineChart({
  lanes: allLanes,
  label = "Operations over time",
  at,
  clockOffsetMs = 0,
  frozen = false,
  windowMs = null,
  providerCalls,
  userNames,
  laneCaption,
  marks = [],
  selected = null,
  onSelect,
  empty,
}: TimelineChartProps) {
  // Safe in `url(#…)` and id lists: React's ids carry punctuation.
  const chartId = `tl${useId().replace(/[^a-zA-Z0-9_-]/g, "")}`;
  const [ref, width] = useWidth<HTMLDivElement>();
  const svgRef = useRef<SVGSVGElement>(null);
  const [clockNow, setClockNow] = useState(() => Date.now() + clockOffsetMs);
  const [focusedKey, setFocusedKey] = useState<string | null>(null);

  const replay = at !== undefined;
  const lanes = useMemo(() => (at === undefined ? allLanes : lanesAsOf(allLanes, at)), [allLanes, at]);
  const now = at ?? Math.max(clockNow, latestStamp(lanes));
  const running = !replay && !frozen && lanes.some((lane) => lane.answeredAt === null);
  const late = useMemo(() => appliedLate(providerCalls ?? []), [providerCalls]);
  const layout = useMemo(
    () => layoutTimeline({ lanes, now, windowMs, width, late }),
    [lanes, now, windowMs, width, late],
  );
  const itemRows = layout.rows.filter((row): row is ItemRow => row.kind !== "user");
  const focused = findItem(itemRows, focusedKey);

  // The moving now: each frame moves the running bars' ends and the now line; past the horizon, a new
  // picture (a state change) is laid out.
  useEffect(() => {
    if (!running) return;
    let frame = requestAnimationFrame(function tick() {
      const current = Date.now() + clockOffsetMs;
      if (current > layout.scale.to) {
        setClockNow(current);
        return;
      }
      const nowX = layout.scale.x(current);
      for (const bar of svgRef.current?.querySelectorAll<SVGElement>("[data-running-from]") ?? []) {
        const from = layout.scale.x(Number(bar.dataset.runningFrom));
        if (bar instanceof SVGLineElement) bar.setAttribute("x2", String(nowX));
        else bar.setAttribute("width", String(Math.max(3, nowX - from)));
      }
      const line = svgRef.current?.querySelector(".tl-now");
      line?.setAttribute("x1", String(nowX));
      line?.setAttribute("x2", String(nowX));
      frame = requestAnimationFrame(tick);
    });
    return () => cancelAnimationFrame(frame);
  }, [running, layout, clockOffsetMs]);

  if (lanes.length === 0 || layout.shown === 0) return <div ref={ref}>{empty}</div>;

  const { scale, origin, height } = layout;
  const userName = (userId: string) => userNames?.[userId] ?? userId;
  const pick = (operationId: string) => onSelect?.(selected === operationId ? null : operationId);
  const detailId = `${chartId}-detail`;
  const helpId = `${chartId}-help`;

  const onKeyDown = (event: React.KeyboardEvent) => {
    if (isMoveKey(event.key)) {
      event.preventDefault();
      const cursor = move(itemRows, focused && { row: focused.row, item: focused.item }, event.key);
      setFocusedKey(cursor ? itemRows[cursor.row]!.items[cursor.item]!.key : null);
    } else if ((event.key === "Enter" || event.key === " ") && focused) {
      event.preventDefault();
      pick(focused.value.lane.operationId);
    } else if (event.key === "Escape" && selected) onSelect?.(null);
  };

  return (
    <div ref={ref} className="timeline-chart">
      <div
        className="timeline-plot"
        tabIndex={0}
        role="group"
        aria-roledescription="timeline"
        aria-label={`${label}: ${layout.shown} operations`}
        aria-describedby={`${helpId} ${detailId}`}
        onKeyDown={onKeyDown}
        onFocus={(event) => {
          if (event.target === event.currentTarget && !focused && itemRows[0]?.items[0])
            setFocusedKey(itemRows[0].items[0].key);
        }}
      >
        <svg ref={svgRef} width={width} height={height} aria-hidden="true" focusable="false">
          <defs>
            <pattern id={`${chartId}-late`} width="6" height="6" patternUnits="userSpaceOnUse">
              <path d="M0,6 L6,0" className="tl-late-hatch" />
            </pattern>
          </defs>
          {tickMarks(scale, origin).map((tick) => (
            <g key={tick}>
              <line x1={scale.x(tick)} x2={scale.x(tick)} y1={18} y2={height} className="tl-grid" />
              <text x={scale.x(tick) + 2} y={12} className="tl-tick">
                {seconds(tick, origin)}
              </text>
            </g>
          ))}
          {layout.rows.map((row) =>
            row.kind === "user" ? (
              <text key={row.key} x={4} y={row.top + 16} className="tl-user">
                {userName(row.userId)}
              </text>
            ) : (
              <RowView
                key={row.key}
                row={row}
                layout={layout}
                now={now}
                caption={row.kind === "lane" ? (laneCaption?.(row.lane) ?? null) : null}
                selected={selected}
                focusedKey={focused?.value.key ?? null}
                lateFill={`url(#${chartId}-late)`}
                onPick={(item) => {
                  setFocusedKey(item.key);
                  pick(item.lane.operationId);
                }}
                onHover={(item) => setFocusedKey(item.key)}
              />
            ),
          )}
          {(running || replay) && <line x1={scale.x(now)} x2={scale.x(now)} y1={18} y2={height} className="tl-now" />}
          {marks.map((mark) => {
            const row = itemRows.find((each) =>
              each.kind === "lane"
                ? each.lane.operationId === mark.operationId
                : each.lanes.some((lane) => lane.operationId === mark.operationId),
            );
            const y = row ? row.top + barTop - 4 : 10;
            return (
              <g key={mark.label} id={mark.id} className="tl-mark">
                <circle cx={scale.x(mark.at)} cy={y} r={8} />
                <text x={scale.x(mark.at)} y={y + 4} textAnchor="middle">
                  {mark.label}
                </text>
              </g>
            );
          })}
        </svg>
      </div>
      <p id={helpId} className="visually-hidden">
        Arrow keys move between phases (up and down between operations), Home and End to the first and last; Enter picks
        out the phase&apos;s operation.
      </p>
      <p id={detailId} className="timeline-detail" aria-live="polite">
        {focused
          ? describeItem(focused.value, origin)
          : "Hover a bar, or Tab to the timeline and use the arrow keys, for its times; click to pick its operation."}
      </p>
      {marks.length > 0 && (
        <ol className="tl-marks" aria-label="Marks on the picture">
          {marks.map((mark) => (
            <li key={mark.label}>
              <span aria-hidden="true">{mark.label}</span> {mark.description} ({seconds(mark.at, origin)})
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

function findItem(rows: ItemRow[], key: string | null): { row: number; item: number; value: Item } | null {
  if (key === null) return null;
  for (const [row, each] of rows.entries()) {
    const item = each.items.findIndex((candidate) => candidate.key === key);
    if (item >= 0) return { row, item, value: each.items[item]! };
  }
  return null;
}

function RowView({
  row,
  layout,
  now,
  caption,
  selected,
  focusedKey,
  lateFill,
  onPick,
  onHover,
}: {
  row: Exclude<Row, { kind: "user" }>;
  layout: Layout;
  now: number;
  caption: string | null;
  selected: string | null;
  focusedKey: string | null;
  lateFill: string;
  onPick: (item: Item) => void;
  onHover: (item: Item) => void;
}) {
  const { x } = layout.scale;
  const { top } = row;
  const isSelected =
    row.kind === "lane" ? selected === row.lane.operationId : row.lanes.some((lane) => lane.operationId === selected);
  const bars = row.items.map((item) => (
    <Bar
      key={item.key}
      item={item}
      origin={layout.origin}
      top={top}
      x={x}
      now={now}
      focused={item.key === focusedKey}
      lateFill={lateFill}
      onPick={onPick}
      onHover={onHover}
    />
  ));
  if (row.kind === "refused") {
    return (
      <g
        data-refused-group={row.holder?.operationId ?? ""}
        data-refused-count={row.lanes.length}
        className={isSelected ? "tl-lane selected" : "tl-lane"}
      >
        <rect x={0} y={top} width="100%" height={laneHeight - 2} className="tl-lane-bg" />
        <text x={4} y={top + 13} className="tl-label">
          {refusedLabel(row.lanes, row.holder)}
        </text>
        {bars}
      </g>
    );
  }
  const { lane } = row;
  const end = lane.answeredAt ? ms(lane.answeredAt) : null;
  return (
    <g data-operation-id={lane.operationId} className={isSelected ? "tl-lane selected" : "tl-lane"}>
      <rect x={0} y={top} width="100%" height={laneHeight - 2} className="tl-lane-bg" />
      <text x={4} y={top + 13} className="tl-label">
        {laneLabel(lane, caption)}
      </text>
      <line
        x1={x(ms(lane.requestedAt))}
        x2={x(end ?? now)}
        y1={top + barTop + barHeight / 2}
        y2={top + barTop + barHeight / 2}
        className="tl-request"
        data-running-from={end === null ? ms(lane.requestedAt) : undefined}
      />
      <LeaseBand lane={lane} top={top} x={x} end={end ?? now} />
      {bars}
    </g>
  );
}

function LeaseBand({ lane, top, x, end }: { lane: Lane; top: number; x: (at: number) => number; end: number }) {
  const lease = lane.lease;
  if (!lease) return null;
  const until = leaseEnd(lease);
  const released = releasedInTime(lease);
  const kept = keptRelease(lane);
  const expiredWhileRunning = !released && ms(lease.expiresAt) < end && lane.status !== 409;
  return (
    <g>
      <rect
        x={x(ms(lease.acquiredAt))}
        y={top + barTop - 3}
        width={Math.max(1, x(until) - x(ms(lease.acquiredAt)))}
        height={barHeight + 6}
        className="tl-lease"
        data-lease-fence={lease.fence}
        data-lease-from={lease.acquiredAt}
        data-lease-until={new Date(until).toISOString()}
        data-lease-end={released ? "released" : kept ? "kept" : "expiry"}
      />
      {released ? (
        // The TTL it would have run to: only a faint tick, the lease no longer holds.
        <line
          x1={x(ms(lease.expiresAt))}
          x2={x(ms(lease.expiresAt))}
          y1={top + barTop}
          y2={top + barTop + barHeight}
          className="tl-expiry faint"
        />
      ) : (
        <line
          x1={x(until)}
          x2={x(until)}
          y1={top + barTop - 5}
          y2={top + barTop + barHeight + 5}
          className={expiredWhileRunning ? "tl-expiry expired" : "tl-expiry"}
        />
      )}
    </g>
  );
}

function Bar({
  item,
  origin,
  top,
  x,
  now,
  focused,
  lateFill,
  onPick,
  onHover,
}: {
  item: Item;
  origin: number;
  top: number;
  x: (at: number) => number;
  now: number;
  focused: boolean;
  lateFill: string;
  onPick: (item: Item) => void;
  onHover: (item: Item) => void;
}) {
  const { phase, style } = item;
  const start = x(item.from);
  const width = Math.max(3, x(item.to ?? now) - start);
  const classes = ["tl-phase", `tl-${phase.name}`];
  if (style.failed) classes.push("failed");
  if (style.appliedLate) classes.push("applied-late");
  if (style.running) classes.push("running");
  if (style.collision) classes.push("collision");
  if (focused) classes.push("focused");
  return (
    <g onClick={() => onPick(item)} onMouseEnter={() => onHover(item)}>
      {style.collision && (
        // Above the bar, a red strip: the one mark no other style uses.
        <rect x={start} y={top + barTop - 7} width={width} height={4} className="tl-collision-strip" />
      )}
      <rect
        x={start}
        y={top + barTop}
        width={width}
        height={barHeight}
        className={classes.join(" ")}
        data-running-from={style.running ? item.from : undefined}
        aria-label={describeItem(item, origin)}
      />
      {style.appliedLate && (
        <rect x={start} y={top + barTop} width={width} height={barHeight} fill={lateFill} className="tl-late" />
      )}
    </g>
  );
}
