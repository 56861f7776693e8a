import type { Strategy } from "./api";

/** What to click first to see a collision under the strategy in force, or why there is none to see. */
export function firstClickHint(strategy: Strategy | undefined): string {
  switch (strategy) {
    case "lease":
      return (
        "Under lease nothing collides, by design: double-click Make primary and the second request is " +
        "refused (409) while the first holds the lease."
      );
    case "none":
      return (
        "Under none, to corrupt the provider, click Make primary on two different identities, one right after " +
        "the other. A double click on one identity collides but does no harm: the second unlink finds nothing (404)."
      );
    case "optimistic":
      return (
        "Under optimistic, click Make primary on two different identities, one right after the other: both " +
        "change the provider, and the loser learns it only at the save (409 stale-write)."
      );
    case undefined:
      return "Reading the lab's settings…";
    default:
      return (
        `Under ${strategy} a second request waits for the first: double-click Make primary and watch ` +
        "the waiting phase on the timeline."
      );
  }
}
