import type { Lane } from "@/lib/lab/lane";
import type { ProviderCall } from "@/lib/provider-sim/lab-client";

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
  /** A caption before a lane's label (a run's variant: "textbook", "safeguards", …); null for none. */
  laneCaption?: (lane: Lane) => string | null;
  /** Numbered marks on the picture. */
  marks?: TimelineMark[];
  /** The operation picked out, and what picking one (or none) does. */
  selected?: string | null;
  onSelect?: (operationId: string | null) => void;
  /** Shown instead of the chart when there is no lane. */
  empty?: React.ReactNode;
}
