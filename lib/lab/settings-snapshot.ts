/**
 * The lab's settings as this process last heard them, so that a switch and a simulated call read no row.
 * They are read once when the listening connection opens (again after it was lost, for what it missed), then
 * replaced by every newer announcement. Another instance's change reaches this one by its NOTIFY, sent at the
 * change's commit. While the connection is down nothing is heard, so every read goes to the database; and
 * nothing is trusted before a probe sent through the process's pool has been heard: a LISTEN through a
 * transaction pooler succeeds, then hears nothing (its server connection went back to the pool).
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { config } from "../core/config";
import { notify, subscribe } from "../core/notifications";
import { defaultLabSettings, type LabSettings } from "./settings-schema";
import { announcementFrom, labSettingsChannel, readLabSettings, type Announcement } from "./settings-store";

interface Heard {
  settings: LabSettings | null;
  /** The newest announcement taken (-1: none yet). */
  revision: bigint;
  /** How many were taken: a catch-up read that overlapped one must not replace it. */
  taken: number;
  listening: boolean;
}

// One per process, whichever bundle evaluates this module.
const holder = globalThis as typeof globalThis & { __leaseLockLabHeardSettings?: Heard };
const heard = (holder.__leaseLockLabHeardSettings ??= { settings: null, revision: -1n, taken: 0, listening: false });

/** The settings in force: as heard while listening, otherwise read; with the lab switched off, the defaults. */
export async function labSettings(db: Kysely<Database>): Promise<LabSettings> {
  if (!config.labEnabled) return defaultLabSettings;
  return (heard.listening ? heard.settings : null) ?? readLabSettings(db);
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

/** From now on this process hears the settings; `onNewer` runs with each newer version, and after a catch-up read. */
/** Heard by this process only: its own probe, sent through its pool, proves that its LISTEN hears. */
const probeChannel = "lab_settings_probe";
const probeWaitMs = 5_000;
const probes = new Map<string, () => void>();

export function hearLabSettings(db: Kysely<Database>, onNewer: (settings: LabSettings) => void): void {
  // Through a transaction pooler alone, LISTEN hears nothing: the settings are read once now, then per use.
  if (!config.hearsNotifications) {
    readLabSettings(db)
      .then(onNewer)
      .catch((error: unknown) => console.error("[lab] could not read the lab settings:", error));
    return;
  }
  // First, so that its LISTEN is in place before the settings' catch-up sends a probe.
  subscribe(probeChannel, { onMessage: (token) => probes.get(token)?.() });
  subscribe(labSettingsChannel, {
    onMessage: (payload) => {
      const announcement = announcementFrom(payload);
      if (takeAnnouncement(announcement)) onNewer(announcement.settings);
    },
    onConnect: () => void catchUp(db, onNewer),
    onDisconnect: () => {
      heard.listening = false;
    },
  });
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

async function catchUp(db: Kysely<Database>, onNewer: (settings: LabSettings) => void): Promise<void> {
  const takenBefore = heard.taken;
  try {
    const settings = await readLabSettings(db);
    // The read began after LISTEN: an announcement heard during it is the same change or a newer one.
    if (heard.taken === takenBefore) heard.settings = settings;
    heard.listening = await listenerHears(db);
    if (!heard.listening)
      console.error(
        `[lab] a notification sent through this process's pool was not heard within ${probeWaitMs} ms (LISTEN through a transaction pooler?): the settings are read per use`,
      );
    onNewer(heard.settings ?? settings);
  } catch (error) {
    console.error("[lab] could not read the lab settings; reading them per use until the next connection:", error);
  }
}
