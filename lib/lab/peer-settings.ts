/**
 * A settings change reaches another instance with its announcement, a moment after the commit (on a busy
 * machine, later than the next request a balancer sends there). So the instance that made a change waits until
 * each peer it knows (LAB_PEER_URLS) answers the same settings at GET /api/lab before it answers: the next
 * request, wherever it lands, runs under them. A peer that does not answer is not waited for (its listener reads
 * the row when it connects again); one that answers other settings (a newer change, a one-shot taken there) is
 * waited for until the limit.
 */
import { setTimeout as pause } from "node:timers/promises";
import { peerUrls } from "./instances";
import type { LabSettings } from "./settings-schema";

/** How long a change waits for its peers at most: past it, the change answers anyway. */
const peersWaitMs = 2_000;
const askAgainMs = 10;

const sortedJson = (value: unknown): string =>
  JSON.stringify(value, (_key, each: unknown) =>
    each && typeof each === "object" && !Array.isArray(each)
      ? Object.fromEntries(Object.entries(each).sort(([a], [b]) => a.localeCompare(b)))
      : each,
  );

/** Whether the instance at `peerUrl` answers `settings`; false when it does not answer, or not within `withinMs`. */
export async function inForceOnPeer(peerUrl: string, settings: LabSettings, withinMs = peersWaitMs): Promise<boolean> {
  const wanted = sortedJson(settings);
  const signal = AbortSignal.timeout(withinMs);
  try {
    for (;;) {
      const answer = await fetch(`${peerUrl}/api/lab`, { signal });
      if (!answer.ok) return false;
      if (sortedJson(await answer.json()) === wanted) return true;
      await pause(askAgainMs, undefined, { signal });
    }
  } catch {
    return false;
  }
}

/** Until every peer answers `settings` (or does not answer, or the limit passed). */
export async function inForceOnPeers(settings: LabSettings): Promise<void> {
  const peers = peerUrls();
  const behind = (await Promise.all(peers.map((url) => inForceOnPeer(url, settings)))).flatMap((inForce, index) =>
    inForce ? [] : [peers[index]!],
  );
  if (behind.length > 0)
    console.warn(
      `[lab] a settings change answered before ${behind.join(", ")} ran it (not answering, or changed since)`,
    );
}
