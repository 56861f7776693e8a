"use client";

import { useCallback, useId, useMemo, useRef, useState } from "react";
import { lanesAsOf, type Lane } from "@/lib/lab/lane";
import {
  appliedLate,
  layoutTimeline,
  tickMarks,
  type ItemRow,
  type Layout,
  type RowContent,
} from "./timeline/geometry";
import { useMovingNow, useWidth } from "./timeline/hooks";
import { chartKeys, findItem, type Focused } from "./timeline/keyboard";
import type { TimelineChartProps } from "./timeline/props";
import { TimelineMarks } from "./timeline/TimelineMarks";
import { RowView, sharedRowCaption, type RowContext } from "./timeline/TimelineRows";
import { describeItem, laneLabel, seconds } from "./timeline/words";

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

/** A row's caption in the legend column. */
function captionOf(row: RowContent, props: Pick<TimelineChartProps, "laneCaption" | "userNames">): string {
  switch (row.kind) {
    case "user":
      return props.userNames?.[row.userId] ?? row.userId;
    case "group":
      return row.group.folded ? `${row.group.label} (${row.count} in one row)` : row.group.label;
    case "lane":
      return props.laneCaption?.(row.lane) ?? laneLabel(row.lane, null);
    default:
      return sharedRowCaption(row);
  }
}

/** The time axis: round-numbered ticks across the plot, from the origin on; a label near the right edge ends at its tick. */
function Axis({ layout }: { layout: Layout }) {
  const right = layout.plotLeft + layout.scale.width;
  return tickMarks(layout.scale, layout.origin).map((tick) => {
    const x = layout.scale.x(tick);
    const atEnd = x > right - 48;
    return (
      <g key={tick}>
        <line x1={x} x2={x} y1={18} y2={layout.height} className="tl-grid" />
        <text x={atEnd ? x - 2 : x + 2} y={12} className="tl-tick" textAnchor={atEnd ? "end" : undefined}>
          {seconds(tick, layout.origin)}
        </text>
      </g>
    );
  });
}

/** The picture itself, hidden from screen readers (the chart's words describe it): axis, rows, now, marks. */
function Picture({
  svgRef,
  chartId,
  props,
  context,
  itemRows,
  nowLine,
}: {
  svgRef: React.RefObject<SVGSVGElement | null>;
  chartId: string;
  props: TimelineChartProps;
  context: RowContext;
  itemRows: ItemRow[];
  nowLine: boolean;
}) {
  const { layout, now } = context;
  return (
    <svg
      ref={svgRef}
      width={layout.plotLeft + layout.scale.width}
      height={layout.height}
      // Scaled, not cut, where the page is narrower than the picture was laid out for (a printed page).
      viewBox={`0 0 ${layout.plotLeft + layout.scale.width} ${layout.height}`}
      aria-hidden="true"
      focusable="false"
    >
      <defs>
        <pattern id={`${chartId}-late`} width="6" height="6" patternUnits="userSpaceOnUse">
          <path d="M0,6 L6,0" className="tl-late-hatch" />
        </pattern>
      </defs>
      <Axis layout={layout} />
      {layout.rows.map((row) => (
        <RowView key={row.key} row={row} context={context} />
      ))}
      {nowLine && (
        <line x1={layout.scale.x(now)} x2={layout.scale.x(now)} y1={18} y2={layout.height} className="tl-now" />
      )}
      <TimelineMarks marks={props.marks ?? []} current={props.currentMark ?? null} rows={itemRows} layout={layout} />
    </svg>
  );
}

/**
 * Every operation as a swimlane, time running left to right: its phases as bars, its lease as a band
 * from its acquisition to its release or expiry (whichever came first), collisions at the provider
 * marked, each row's caption in a legend column on the left. Requests refused while another held the
 * lease share one lane; a folded group shares one row.
 *
 * Drawn again only when the lanes change; while one runs, an animation frame moves "now" (the running
 * bars' ends and the now line) without drawing the rest, until now passes the picture's horizon.
 * The chart is one tab stop: arrow keys move between bars, and the focused one is described in words.
 */
export function TimelineChart(props: TimelineChartProps) {
  const { label = "Operations over time", at, selected = null, onSelect } = props;
  // Safe in `url(#…)` and id lists: React's ids carry punctuation.
  const chartId = `tl${useId().replace(/[^a-zA-Z0-9_-]/g, "")}`;
  const [ref, width] = useWidth<HTMLDivElement>();
  const svgRef = useRef<SVGSVGElement>(null);
  const [focusedKey, setFocusedKey] = useState<string | null>(null);
  const { lanes, now, running, layout } = useChartLayout(props, width, svgRef);
  const itemRows = layout.rows.filter((row): row is ItemRow => "items" in row);
  const focused = findItem(itemRows, focusedKey);

  if (lanes.length === 0 || layout.shown === 0) return <div ref={ref}>{props.empty}</div>;

  const pick = (operationId: string) => onSelect?.(selected === operationId ? null : operationId);
  const context: RowContext = {
    layout,
    now,
    selected,
    focusedKey: focused?.value.key ?? null,
    lateFill: `url(#${chartId}-late)`,
    onPick: (item) => {
      setFocusedKey(item.key);
      pick(item.lane.operationId);
    },
    onHover: (item) => setFocusedKey(item.key),
  };
  return (
    <div ref={ref} className="timeline-chart">
      <div
        className="timeline-plot"
        tabIndex={0}
        role="group"
        aria-roledescription="timeline"
        aria-label={`${label}: ${layout.shown} operations`}
        aria-describedby={`${chartId}-help ${chartId}-detail`}
        onKeyDown={chartKeys(itemRows, focused, {
          focus: setFocusedKey,
          pick,
          unpick: selected ? () => onSelect?.(null) : null,
        })}
        onFocus={(event) => {
          if (event.target === event.currentTarget && !focused && itemRows[0]?.items[0])
            setFocusedKey(itemRows[0].items[0].key);
        }}
      >
        <Picture {...{ svgRef, chartId, props, context, itemRows }} nowLine={running || at !== undefined} />
      </div>
      <ChartWords chartId={chartId} focused={focused} props={props} origin={layout.origin} />
    </div>
  );
}

/** The lanes as of the moment drawn, "now", whether something runs, and their layout; "now" moves while it does. */
function useChartLayout(props: TimelineChartProps, width: number, svgRef: React.RefObject<SVGSVGElement | null>) {
  const { lanes: allLanes, at, clockOffsetMs = 0, frozen = false, windowMs = null, providerCalls, groupOf } = props;
  const [clockNow, setClockNow] = useState(() => Date.now() + clockOffsetMs);
  const lanes = useMemo(() => (at === undefined ? allLanes : lanesAsOf(allLanes, at)), [allLanes, at]);
  const now = at ?? Math.max(clockNow, latestStamp(lanes));
  const running = at === undefined && !frozen && lanes.some((lane) => lane.answeredAt === null);
  const late = useMemo(() => appliedLate(providerCalls ?? []), [providerCalls]);
  // A replay's moment and its marks (a run's last audit comes after its last lane) are drawn inside the picture.
  const until = Math.max(at ?? 0, ...(props.marks ?? []).map((mark) => mark.at));
  const { laneCaption, userNames } = props;
  const caption = useCallback(
    (row: RowContent) => captionOf(row, { laneCaption, userNames }),
    [laneCaption, userNames],
  );
  const layout = useMemo(
    () =>
      layoutTimeline({
        ...{ lanes, now, windowMs, width, late, groupOf, until, caption },
        everyLane: at !== undefined,
      }),
    [lanes, now, windowMs, width, late, groupOf, until, at, caption],
  );
  useMovingNow(svgRef, { running, layout, clockOffsetMs, onHorizon: setClockNow });
  return { lanes, now, running, layout };
}

/** The chart in words: how to move in it (for screen readers), and the bar focused or hovered. */
function ChartWords({
  chartId,
  focused,
  props,
  origin,
}: {
  chartId: string;
  focused: Focused | null;
  props: TimelineChartProps;
  origin: number;
}) {
  const caption = focused && props.laneCaption ? `${props.laneCaption(focused.value.lane)}. ` : "";
  return (
    <>
      <p id={`${chartId}-help`} className="visually-hidden">
        Arrow keys move between phases (up and down between operations), Home and End to the first and last; Enter picks
        out the phase&apos;s operation.
      </p>
      <p id={`${chartId}-detail`} className="timeline-detail" aria-live="polite">
        {focused
          ? `${caption}${describeItem(focused.value, origin)}`
          : "Hover a bar, or Tab to the timeline and use the arrow keys, for its times; click to pick its operation."}
      </p>
    </>
  );
}
