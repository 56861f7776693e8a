/**
 * The lab's settings as this process last heard them, so that a switch and a simulated call read no row.
 * They are read once when the listening connection opens (again after it was lost, for what it missed), then
 * replaced by every newer announcement. Another instance's change reaches this one by its NOTIFY, sent at the
 * change's commit. While the connection is down nothing is heard, so every read goes to the database; and
 * nothing is trusted before a probe sent through the process's pool has been heard: a LISTEN through a
 * transaction pooler succeeds, then hears nothing (its server connection went back to the pool).
 *
 * So a change made on one instance is in force on another once its NOTIFY has arrived there, a moment after
 * the change's commit; the instance that made it answers once its peers run it (peer-settings.ts).
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { config } from "../core/config";
import { notify, subscribe } from "../core/notifications";
import { processSingleton } from "../core/process-singleton";
import { defaultLabSettings, type LabSettings } from "./settings-schema";
import { announcementFrom, labSettingsChannel, readLabSettings, type Announcement } from "./settings-store";

interface Heard {
  settings: LabSettings | null;
  /** The newest announcement taken (-1: none yet). */
  revision: bigint;
  /** How many were taken: a catch-up read that overlapped one must not replace it. */
  taken: number;
  listening: boolean;
  /** Counts the listening connection's openings and losses: a catch-up of an earlier one is dropped. */
  connection: number;
}

const heard = processSingleton<Heard>("HeardSettings", () => ({
  settings: null,
  revision: -1n,
  taken: 0,
  listening: false,
  connection: 0,
}));

/** The settings in force: as heard while listening, otherwise read; with the lab switched off, the defaults. */
export async function labSettings(db: Kysely<Database>): Promise<LabSettings> {
  if (!config.labEnabled) return defaultLabSettings;
  return (heard.listening ? heard.settings : null) ?? readLabSettings(db);
}

/**
 * The settings in force and, when they are the ones heard, the revision of the newest announcement taken (null
 * when read per use or none was taken; after a catch-up read the settings may be newer than it, never older):
 * what GET /api/lab tells a peer waiting for a change.
 */
export async function labSettingsAsHeard(
  db: Kysely<Database>,
): Promise<{ settings: LabSettings; revision: bigint | null }> {
  // Both from one moment: the settings heard and their revision, or a read that names none.
  if (config.labEnabled && heard.listening && heard.settings)
    return { settings: heard.settings, revision: heard.revision >= 0n ? heard.revision : null };
  return { settings: await labSettings(db), revision: null };
}

/**
 * Takes announced settings unless a newer announcement was taken already: a change taken at once by the
 * instance that made it is not undone by an older one arriving late. True when taken.
 */
export function takeAnnouncement({ settings, revision }: Announcement): boolean {
  if (revision <= heard.revision) return false;
  Object.assign(heard, { settings, revision, taken: heard.taken + 1 });
  return true;
}

/** Sent through this process's pool and listened for on its listening connection: proof that it hears. */
const probeChannel = "lab_settings_probe";
const probeWaitMs = 5_000;
/** After a probe that was not heard (a drained pool can delay it too), the next try. */
const probeAgainMs = 30_000;
const probes = new Map<string, () => void>();

/**
 * From now on this process hears the settings; `onNewer` runs with each newer version, and after a catch-up
 * read. Returns the unsubscribe.
 */
export function hearLabSettings(db: Kysely<Database>, onNewer: (settings: LabSettings) => void): () => void {
  // Through a transaction pooler alone, LISTEN hears nothing: the settings are read once now, then per use.
  if (!config.hearsNotifications) {
    readLabSettings(db)
      .then(onNewer)
      .catch((error: unknown) => console.error("[lab] could not read the lab settings:", error));
    return () => {};
  }
  // First, so that its LISTEN is in place before the settings' catch-up sends a probe.
  const unsubscribeProbe = subscribe(probeChannel, { onMessage: (token) => probes.get(token)?.() });
  const unsubscribe = subscribe(labSettingsChannel, {
    onMessage: (payload) => {
      const announcement = announcementFrom(payload);
      if (takeAnnouncement(announcement)) onNewer(announcement.settings);
    },
    onConnect: () => void catchUp(db, onNewer, ++heard.connection),
    onDisconnect: () => {
      heard.connection++;
      heard.listening = false;
    },
  });
  return () => {
    unsubscribe();
    unsubscribeProbe();
  };
}

/** Whether a notification sent through `db` now reaches this process's listener. */
async function listenerHears(db: Kysely<Database>): Promise<boolean> {
  const token = randomUUID();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await new Promise<boolean>((resolve, reject) => {
      probes.set(token, () => resolve(true));
      timer = setTimeout(() => resolve(false), probeWaitMs);
      notify(db, probeChannel, token).catch(reject);
    });
  } finally {
    clearTimeout(timer);
    probes.delete(token);
  }
}

/** Reads the settings and proves the listener hears, for the connection numbered `connection`. */
async function catchUp(
  db: Kysely<Database>,
  onNewer: (settings: LabSettings) => void,
  connection: number,
): Promise<void> {
  const takenBefore = heard.taken;
  try {
    const settings = await readLabSettings(db);
    const hears = await listenerHears(db);
    // The connection was lost or opened again meanwhile: that one's catch-up decides.
    if (heard.connection !== connection) return;
    // The read began after LISTEN: an announcement heard during it is the same change or a newer one.
    if (heard.taken === takenBefore) heard.settings = settings;
    heard.listening = hears;
    onNewer(heard.settings ?? settings);
    if (hears) return;
    console.error(
      `[lab] a notification sent through this process's pool was not heard within ${probeWaitMs} ms ` +
        "(LISTEN through a transaction pooler, or the pool drained?): the settings are read per use, " +
        `and the probe is sent again in ${probeAgainMs / 1000} s`,
    );
  } catch (error) {
    if (heard.connection !== connection) return;
    console.error("[lab] could not catch up on the lab settings; they are read per use until it succeeds:", error);
  }
  setTimeout(() => {
    if (heard.connection === connection) void catchUp(db, onNewer, connection);
  }, probeAgainMs).unref();
}
