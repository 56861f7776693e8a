/**
 * A settings change reaches another process with its announcement, a moment after the commit (on a busy
 * machine, later than the next request a balancer sends there, or the next call the simulated provider gets).
 * So the instance that made a change (a `PUT /api/lab`, a reset, an experiment's restore) waits before it
 * answers until each peer instance it knows (LAB_PEER_URLS) and the simulated provider run it: the peer's
 * `GET /api/lab` answers the same settings, the provider's `GET /lab/knobs` the same `provider` part, or either
 * names the revision of this announcement or a newer one (a newer one was written over this one). A process
 * that does not answer is not waited for (its listener reads the row when it connects again); past the limit,
 * the change answers anyway: the case of a process that reads the settings per use (it names no revision) and
 * whose row changed again meanwhile.
 */
import { setTimeout as pause } from "node:timers/promises";
import { config } from "../core/config";
import { peerUrls } from "./instances";
import type { LabSettings } from "./settings-schema";
import type { Announcement } from "./settings-store";

/** The revision of the newest announcement the answering instance took, on GET /api/lab while it listens. */
export const settingsRevisionHeader = "Lab-Settings-Revision";
/** How long a change waits for the others at most: past it, the change answers anyway. */
const waitMs = 2_000;
const askAgainMs = 10;

/** What a process answers it runs: settings (or their `provider` part) and the revision it heard, if it names one. */
interface InForce {
  settings: unknown;
  revision: string | null;
}

const sortedJson = (value: unknown): string =>
  JSON.stringify(value, (_key, each: unknown) =>
    each && typeof each === "object" && !Array.isArray(each)
      ? Object.fromEntries(Object.entries(each).sort(([a], [b]) => a.localeCompare(b)))
      : each,
  );

/**
 * Whether the process that `url` reads (`read` its answer) runs `wanted`, announced as `revision` when known: asked
 * again while it answers otherwise or an error, until `withinMs`; false then, or when it does not answer at all.
 */
async function runs(
  url: string,
  read: (answer: Response) => Promise<InForce>,
  wanted: unknown,
  revision: bigint | null,
  withinMs: number,
): Promise<boolean> {
  const wantedJson = sortedJson(wanted);
  const signal = AbortSignal.timeout(withinMs);
  for (;;) {
    let answer: Response;
    try {
      answer = await fetch(url, { signal });
    } catch {
      return false;
    }
    try {
      if (answer.ok) {
        const inForce = await read(answer);
        if (sortedJson(inForce.settings) === wantedJson) return true;
        const heard = inForce.revision;
        if (revision !== null && heard !== null && /^\d+$/.test(heard) && BigInt(heard) >= revision) return true;
      } else await answer.body?.cancel();
      await pause(askAgainMs, undefined, { signal });
    } catch {
      // The limit passed while reading or pausing.
      return false;
    }
  }
}

/** Whether the instance at `peerUrl` runs `settings` (announced as `revision`, when known). */
export const inForceOnPeer = (
  peerUrl: string,
  settings: LabSettings,
  revision: bigint | null = null,
  withinMs = waitMs,
): Promise<boolean> =>
  runs(
    `${peerUrl}/api/lab`,
    async (answer) => ({ settings: await answer.json(), revision: answer.headers.get(settingsRevisionHeader) }),
    settings,
    revision,
    withinMs,
  );

/** Whether the simulated provider runs the `provider` part of `settings` (announced as `revision`). */
const inForceAtProvider = (settings: LabSettings, revision: bigint): Promise<boolean> =>
  runs(
    `${config.identityProviderBaseUrl}/lab/knobs`,
    async (answer) => {
      const { knobs, revision: heard } = (await answer.json()) as { knobs: unknown; revision: string | null };
      return { settings: knobs, revision: heard };
    },
    settings.provider,
    revision,
    waitMs,
  );

/** Until every peer and the simulated provider run the announced change (or do not answer, or the limit passed). */
export async function inForceEverywhere({ settings, revision }: Announcement): Promise<void> {
  const others = [
    ...peerUrls().map((url) => ({ name: url, ran: inForceOnPeer(url, settings, revision) })),
    { name: "the simulated provider", ran: inForceAtProvider(settings, revision) },
  ];
  const behind: string[] = [];
  for (const { name, ran } of others) if (!(await ran)) behind.push(name);
  if (behind.length > 0)
    console.warn(
      `[lab] a settings change answered before ${behind.join(", ")} ran it (not answering, or changed since)`,
    );
}
