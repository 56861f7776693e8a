"use client";

import { leaseEnd, releasedInTime, type Lane } from "@/lib/lab/lane";
import { barHeight, barTop, type Item, type Layout, type Row, type RowContent } from "./geometry";
import { describeItem, keptRelease, refusedLabel } from "./words";

const ms = (iso: string): number => Date.parse(iso);

/** What every row needs to draw its bars. */
export interface RowContext {
  layout: Layout;
  now: number;
  selected: string | null;
  focusedKey: string | null;
  lateFill: string;
  onPick: (item: Item) => void;
  onHover: (item: Item) => void;
}

/** A row's caption, as the layout cut it: a lane's in the legend column, a header's across the picture. */
function Caption({ row }: { row: Row }) {
  const header = row.kind === "user" || row.kind === "group";
  const className = row.kind === "user" ? "tl-user" : row.kind === "group" ? "tl-group" : "tl-label";
  return (
    <text x={4} y={row.top + (header ? 16 : 12)} className={className}>
      {row.lines.map((line, index) => (
        <tspan key={index} x={4} dy={index === 0 ? 0 : header ? 14 : 12}>
          {line}
        </tspan>
      ))}
    </text>
  );
}

/** One row of the picture: a header (a user, a run's variant), a lane, or lanes that share a row. */
export function RowView({ row, context }: { row: Row; context: RowContext }) {
  if (row.kind === "user" || row.kind === "group")
    return (
      <g className={row.kind === "user" ? "tl-user-row" : "tl-group-row"} data-group={row.key}>
        <line x1={0} x2="100%" y1={row.top + 2} y2={row.top + 2} className="tl-group-rule" />
        <Caption row={row} />
      </g>
    );
  const bars = row.items.map((item) => <Bar key={item.key} item={item} top={row.top} context={context} />);
  const isSelected =
    row.kind === "lane"
      ? context.selected === row.lane.operationId
      : row.lanes.some((lane) => lane.operationId === context.selected);
  const className = isSelected ? "tl-lane selected" : "tl-lane";
  const background = <rect x={0} y={row.top} width="100%" height={row.height - 2} className="tl-lane-bg" />;
  if (row.kind !== "lane")
    return (
      <g
        className={className}
        {...(row.kind === "refused"
          ? { "data-refused-group": row.holder?.operationId ?? "", "data-refused-count": row.lanes.length }
          : { "data-folded-count": row.lanes.length })}
      >
        {background}
        <Caption row={row} />
        {bars}
      </g>
    );
  const { lane } = row;
  const end = lane.answeredAt ? ms(lane.answeredAt) : null;
  const { x } = context.layout.scale;
  return (
    <g data-operation-id={lane.operationId} className={className}>
      {background}
      <Caption row={row} />
      <line
        x1={x(ms(lane.requestedAt))}
        x2={x(end ?? context.now)}
        y1={row.top + barTop + barHeight / 2}
        y2={row.top + barTop + barHeight / 2}
        className="tl-request"
        data-running-from={end === null ? ms(lane.requestedAt) : undefined}
      />
      <LeaseBand lane={lane} top={row.top} x={x} end={end ?? context.now} />
      {bars}
    </g>
  );
}

/** The words of a row that shares its lanes: the refused requests, or a folded group. */
export const sharedRowCaption = (row: Extract<RowContent, { kind: "refused" | "folded" }>): string =>
  row.kind === "refused" ? refusedLabel(row.lanes, row.holder) : `${row.lanes.length} operations, folded into this row`;

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

function Bar({ item, top, context }: { item: Item; top: number; context: RowContext }) {
  const { phase, style } = item;
  const { x } = context.layout.scale;
  const start = x(item.from);
  const width = Math.max(3, x(item.to ?? context.now) - start);
  const classes = ["tl-phase", `tl-${phase.name}`];
  if (style.failed) classes.push("failed");
  if (style.appliedLate) classes.push("applied-late");
  if (style.running) classes.push("running");
  if (style.collision) classes.push("collision");
  if (item.key === context.focusedKey) classes.push("focused");
  return (
    <g onClick={() => context.onPick(item)} onMouseEnter={() => context.onHover(item)}>
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
        aria-label={describeItem(item, context.layout.origin)}
      />
      {style.appliedLate && (
        <rect x={start} y={top + barTop} width={width} height={barHeight} fill={context.lateFill} className="tl-late" />
      )}
    </g>
  );
}
