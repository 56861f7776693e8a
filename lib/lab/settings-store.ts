/**
 * The lab's settings as stored: one JSON document in the database, so every tab and every app instance
 * shares them. A change is validated whole (some rules span several fields).
 */
import { sql, type Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { config } from "../core/config";
import { notify } from "../core/notifications";
import { parseOrThrow } from "../core/validation";
import { deepMerge } from "./deep-merge";
import {
  defaultLabSettings,
  labSettingsSchema,
  type LabSettings,
  type CrashPoint,
  type StallPoint,
} from "./settings-schema";
import type { ProviderEndpoint, ScriptedOutcome } from "../provider-sim/chaos-settings";

/**
 * The settings as stored now, read from the database: for writers and catch-ups. Everything else asks
 * `labSettings` (settings-snapshot.ts), which reads no row while this process hears the announcements.
 */
export async function readLabSettings(db: Kysely<Database>): Promise<LabSettings> {
  if (!config.labEnabled) return defaultLabSettings;
  const row = await db.selectFrom("lab_settings").select("settings").executeTakeFirst();
  return row ? settingsFrom(row.settings) : defaultLabSettings;
}

/** Every instance hears the settings in force on this channel (the whole document as JSON) when they change. */
export const labSettingsChannel = "lab_settings";

/**
 * A settings change as announced: the settings and their revision, the database's clock in microseconds
 * when the change was written (writers of the settings row are serialised by its lock, so revisions follow
 * the commits' order). An instance applies an announcement only if it is newer than the last it applied.
 */
export interface Announcement {
  settings: LabSettings;
  revision: bigint;
}

/** Tells every app instance the settings in force; sent at commit when `db` is a transaction. */
export async function publishLabSettings(db: Kysely<Database>, settings: LabSettings): Promise<Announcement> {
  const { rows } = await sql<{ revision: string }>`
    SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint::text AS revision`.execute(db);
  const revision = rows[0]!.revision;
  await notify(db, labSettingsChannel, JSON.stringify({ settings, revision }));
  return { settings, revision: BigInt(revision) };
}

export function announcementFrom(payload: string): Announcement {
  const { settings, revision } = JSON.parse(payload) as { settings: unknown; revision: string };
  return { settings: settingsFrom(settings), revision: BigInt(revision) };
}

export async function updateLabSettings(db: Kysely<Database>, patch: unknown): Promise<Announcement> {
  // Read under the row's lock, merged, written and announced in one transaction: two changes at once
  // apply one after the other (neither is lost), and their announcements arrive in the order they committed.
  return db.transaction().execute(async (trx) => {
    // One statement that locks the row, or puts the defaults in and locks them when a reset left none.
    const { rows } = await sql<{ settings: unknown }>`
      INSERT INTO lab_settings (settings) VALUES (${JSON.stringify(defaultLabSettings)})
      ON CONFLICT (id) DO UPDATE SET settings = lab_settings.settings
      RETURNING settings`.execute(trx);
    const next = parseOrThrow(labSettingsSchema, deepMerge(settingsFrom(rows[0]!.settings), patch), "body");
    await trx
      .updateTable("lab_settings")
      .set({ settings: JSON.stringify(next) })
      .execute();
    return publishLabSettings(trx, next);
  });
}

/**
 * Puts `settings` in force whole (a reset), written and announced under the row's lock like a change: a
 * change committed just before gets an older revision, one just after a newer one.
 */
export async function replaceLabSettings(db: Kysely<Database>, settings: LabSettings): Promise<Announcement> {
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto("lab_settings")
      .values({ settings: JSON.stringify(settings) })
      .onConflict((conflict) => conflict.column("id").doUpdateSet({ settings: JSON.stringify(settings) }))
      .execute();
    return publishLabSettings(trx, settings);
  });
}

/**
 * Takes a one-shot setting (a scripted outcome, a stall, a crash): reads it and writes the settings without
 * it under a row lock, so that each is used exactly once, whichever app instance uses it; announced like any
 * change, so the page stops showing it as armed.
 */
async function takeOneShot<T>(
  db: Kysely<Database>,
  take: (settings: LabSettings) => { value: T; rest: LabSettings } | null,
): Promise<T | null> {
  if (!config.labEnabled) return null;
  return db.transaction().execute(async (trx) => {
    const row = await sql<{ settings: unknown }>`SELECT settings FROM lab_settings FOR UPDATE`.execute(trx);
    if (!row.rows[0]) return null;
    const taken = take(settingsFrom(row.rows[0].settings));
    if (!taken) return null;
    await trx
      .updateTable("lab_settings")
      .set({ settings: JSON.stringify(taken.rest) })
      .execute();
    await publishLabSettings(trx, taken.rest);
    return taken.value;
  });
}

export function takeScriptedOutcome(db: Kysely<Database>, endpoint: ProviderEndpoint): Promise<ScriptedOutcome | null> {
  return takeOneShot(db, (settings) => {
    const [next, ...rest] = settings.provider.script[endpoint];
    return next ? { value: next, rest: deepMerge(settings, { provider: { script: { [endpoint]: rest } } }) } : null;
  });
}

export function takeStall(db: Kysely<Database>): Promise<{ at: StallPoint; ms: number } | null> {
  return takeOneShot(db, (settings) => {
    const stall = settings.faults.stall;
    return stall ? { value: stall, rest: deepMerge(settings, { faults: { stall: null } }) } : null;
  });
}

export function takeCrash(db: Kysely<Database>): Promise<CrashPoint | null> {
  return takeOneShot(db, (settings) => {
    const crash = settings.faults.crash;
    return crash ? { value: crash, rest: deepMerge(settings, { faults: { crash: null } }) } : null;
  });
}

// Stored settings from an older shape fall back to the defaults field by field.
export function settingsFrom(stored: unknown): LabSettings {
  const parsed = labSettingsSchema.safeParse(deepMerge(defaultLabSettings, stored));
  return parsed.success ? parsed.data : defaultLabSettings;
}
