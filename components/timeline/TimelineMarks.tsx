"use client";

import type { TimelineMark } from "./props";
import { barTop, rowHolds, type ItemRow, type Layout } from "./geometry";
import { charsIn } from "./words";

const radius = 8;
const currentRadius = 11;

/** Where a mark sits: at its moment, above the bars of its lane's row (on the axis when no row shows it). */
function placeOf(mark: TimelineMark, rows: ItemRow[], layout: Layout) {
  const row = mark.operationId ? rows.find((each) => rowHolds(each, mark.operationId!)) : undefined;
  return { x: layout.scale.x(mark.at), y: row ? row.top + barTop - 4 : 10 };
}

/**
 * The current mark's one-line caption, beside it: to its right, or to its left when the picture ends first,
 * cut to what the plot holds.
 */
function CurrentCaption({ text, x, y, layout }: { text: string; x: number; y: number; layout: Layout }) {
  const right = layout.plotLeft + layout.scale.width;
  const room = Math.max(x - layout.plotLeft, right - x) - currentRadius - 8;
  const shown = text.length > charsIn(room) ? `${text.slice(0, charsIn(room) - 1).trimEnd()}…` : text;
  const width = shown.length * 6.4 + 8;
  const toTheRight = x + currentRadius + 4 + width <= right;
  const left = toTheRight ? x + currentRadius + 4 : x - currentRadius - 4 - width;
  return (
    <g className="tl-mark-caption">
      <rect x={left} y={y - 9} width={width} height={18} rx={3} />
      <text x={left + 4} y={y + 4}>
        {shown}
      </text>
    </g>
  );
}

/** The numbered marks on the picture; the current one larger, in the accent colour, with its caption beside it. */
export function TimelineMarks({
  marks,
  current,
  rows,
  layout,
}: {
  marks: TimelineMark[];
  current: string | null;
  rows: ItemRow[];
  layout: Layout;
}) {
  const currentMark = marks.find((mark) => mark.label === current);
  return (
    <g>
      {marks.map((mark) => {
        const { x, y } = placeOf(mark, rows, layout);
        const isCurrent = mark === currentMark;
        return (
          <g
            key={mark.label}
            id={mark.id}
            className={isCurrent ? "tl-mark current" : "tl-mark"}
            data-mark={mark.label}
            data-current={isCurrent ? "true" : undefined}
          >
            <circle cx={x} cy={y} r={isCurrent ? currentRadius : radius} />
            <text x={x} y={y + 4} textAnchor="middle">
              {mark.label}
            </text>
          </g>
        );
      })}
      {currentMark?.caption && (
        <CurrentCaption text={currentMark.caption} {...placeOf(currentMark, rows, layout)} layout={layout} />
      )}
    </g>
  );
}
