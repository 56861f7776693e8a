import type { Lane } from "@/lib/lab/lane";
import type { ProviderCall } from "@/lib/provider-sim/lab-client";
import type { LaneGroup } from "./geometry";

/** A numbered mark on the picture (a cited fact: ① lease expires, ② second switch takes over …). */
export interface TimelineMark {
  /** Shown in the circle: "1", "2", … */
  label: string;
  /** When, in ms on the lanes' clock (the database's). */
  at: number;
  /** The lane it sits on; on the time axis without one. */
  operationId?: string;
  /** What the mark says, for the keyboard and screen readers. */
  description: string;
  /** The fact in one short line, drawn beside the mark while it is the current one. */
  caption?: string;
  /** The id the explanation links to (`href="#…"`). */
  id?: string;
}

/**
 * What `TimelineChart` draws from: any page passes lanes (a live query's, or a saved run's) and, if it
 * has them, the rest. Everything but `lanes` is optional.
 */
export interface TimelineChartProps {
  /** The lanes to draw, oldest first. */
  lanes: Lane[];
  /** The chart's accessible name. */
  label?: string;
  /**
   * The moment drawn as "now", in ms on the lanes' clock: a replay's scrubbed moment (the lanes are drawn
   * as they stood then). Omitted: live, the browser's clock plus `clockOffsetMs`, moving while a lane runs.
   */
  at?: number;
  /** How far the lanes' clock (the database's) is ahead of this browser's, for a live "now". */
  clockOffsetMs?: number;
  /** Holds the live "now" still (a paused view). */
  frozen?: boolean;
  /** The time window: null fits the last operations (the default), a number shows the last that many ms. */
  windowMs?: number | null;
  /** The provider's call log: marks the calls the provider applied after the caller gave up. */
  providerCalls?: ProviderCall[];
  /** Display names by user id (the lane's user id otherwise). */
  userNames?: Record<string, string>;
  /** A lane's caption in the legend column (a run's words for its request); by default, its operation in words. */
  laneCaption?: (lane: Lane) => string;
  /** The group each lane is drawn in, under the group's caption (a run's variant); by default, by user. */
  groupOf?: (lane: Lane) => LaneGroup;
  /**
   * Numbered marks on the picture, described in words by the page that shows them (the picture itself is
   * hidden from screen readers).
   */
  marks?: TimelineMark[];
  /** The label of the mark the page is at: drawn larger, with its caption beside it. */
  currentMark?: string | null;
  /** The operation picked out, and what picking one (or none) does. */
  selected?: string | null;
  onSelect?: (operationId: string | null) => void;
  /** Shown instead of the chart when there is no lane. */
  empty?: React.ReactNode;
}
