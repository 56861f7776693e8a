import { defaultLabSettings, type LabSettings } from "./settings-schema";

/** One setting that is not the lab's default: its path (`provider.latencyMs`), its value and the default's. */
export interface SettingChange {
  path: string;
  value: unknown;
  defaultValue: unknown;
}

/**
 * Every leaf of `settings` that differs from the defaults, in the schema's order. Arrays and null count as
 * leaves (a script, an unset stall), so a changed one is named once, whole.
 */
export function settingsChanges(settings: LabSettings, defaults: LabSettings = defaultLabSettings): SettingChange[] {
  const changes: SettingChange[] = [];
  const walk = (value: unknown, defaultValue: unknown, path: string[]) => {
    if (isObject(value) && isObject(defaultValue)) {
      for (const key of Object.keys(defaultValue)) walk(value[key], defaultValue[key], [...path, key]);
      return;
    }
    if (JSON.stringify(value) !== JSON.stringify(defaultValue))
      changes.push({ path: path.join("."), value, defaultValue });
  };
  walk(settings, defaults, []);
  return changes;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
