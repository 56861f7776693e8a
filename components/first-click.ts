import type { LabSettings, Strategy } from "./api";

/** What a double click, or two quick clicks on two identities, shows under each strategy. */
const byStrategy: Record<Strategy, string> = {
  lease:
    "Under lease nothing collides, by design: double-click Make primary and the second request is " +
    "refused (409) while the first holds the lease.",
  none:
    "Under none, to corrupt the provider, click Make primary on two different identities, one right after " +
    "the other. A double click on one identity collides but does no harm: the second unlink finds nothing (404).",
  optimistic:
    "Under optimistic, click Make primary on two different identities, one right after the other: both " +
    "change the provider, and the loser learns it only at the save (409 stale-write).",
  transaction:
    "Under transaction a second request waits for the first: double-click Make primary and watch its " +
    "waiting phase on the timeline (it holds a pooled connection while it waits).",
  advisory:
    "Under advisory a second request waits for the first: double-click Make primary and watch its " +
    "waiting phase on the timeline (it holds a pooled connection while it waits).",
  "session-advisory":
    "Under session-advisory a second request waits for the first's session lock: double-click Make " +
    "primary and the second's provider calls start only once the first has finished.",
  "in-process":
    "Under in-process a second request to the same app instance waits in its memory: double-click Make " +
    "primary and the second's provider calls start only once the first has finished.",
  redis:
    "Under redis, double-click Make primary: the second request is refused (409) while the first holds " +
    "the Redis key.",
};

/**
 * What to click first to see a collision under the settings in force, or why there is none to see. With
 * the page's guard on, a click disables every Make primary until it answers, so only one is sent.
 */
export function firstClickHint(settings: Pick<LabSettings, "strategy" | "clientGuard"> | undefined): string {
  if (!settings) return "Reading the lab's settings…";
  const hint = byStrategy[settings.strategy];
  if (!settings.clientGuard) return hint;
  return (
    "The page's guard is on (Lab controls): while a switch runs, every Make primary is disabled, so a " +
    `double click sends one request. Turn it off to try this by hand: ${hint}`
  );
}
