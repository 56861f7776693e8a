import { answerWords, isRefused, type Lane } from "@/lib/lab/lane";
import { holderAt, layoutTimeline } from "./timeline/geometry";
import type { TimelineMark } from "./TimelineChart";

/** The newest ones only: a burst's refusals share one row, and older rows scroll out of the picture. */
const marksKept = 3;

/** Any moment after every recorded one: a lane still running runs until then, as the chart draws it. */
const afterEverything = Number.MAX_SAFE_INTEGER;

/**
 * In the chart's "fit" view, a numbered mark on every row that answered 409, so that a refusal a few
 * milliseconds long is seen without zooming, and is said in words under the picture. The rows are the
 * chart's own layout (requests refused while one lane held the lease share a row); in "fit" they depend
 * on the lanes only, not on the moment drawn.
 */
export function conflictMarks(lanes: Lane[]): TimelineMark[] {
  const { rows } = layoutTimeline({ lanes, now: afterEverything, windowMs: null, width: 1 });
  const conflicts = rows.flatMap((row) => {
    if (row.kind === "refused") return [row.lanes];
    return row.kind === "lane" && row.lane.status === 409 ? [[row.lane]] : [];
  });
  return conflicts.slice(-marksKept).map((group, index) => {
    const first = group[0]!;
    const at = Date.parse(first.phases.find((phase) => phase.name === "acquire")?.startedAt ?? first.requestedAt);
    const usersLanes = lanes.filter((lane) => lane.userId === first.userId);
    const holder = isRefused(first) ? holderAt(usersLanes, at, afterEverything) : null;
    const held = holder ? `, while ${holder.operationId.slice(0, 8)} held the lease` : "";
    const what = isRefused(first)
      ? `409: refused at acquisition${held}`
      : [...new Set(group.map(answerWords))].join(", ");
    return {
      label: String(index + 1),
      at,
      operationId: first.operationId,
      description: `${group.length === 1 ? "" : `${group.length} requests, `}${what}`,
    };
  });
}
