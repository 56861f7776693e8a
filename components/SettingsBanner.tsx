"use client";

import { useQuery } from "@tanstack/react-query";
import { settingsChanges } from "@/lib/lab/settings-changes";
import { labSettingsQuery } from "./queries";
import { useResetLab } from "./useLab";

const shown = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));

/**
 * Beside the audit: every setting that is not the lab's default, by name, and one click back to the
 * defaults and the seed's users. What a run shows depends on them, and a tab may inherit them from
 * another tab or a class before. The Reset stays while the settings are the defaults: damage done under
 * `none` outlives a change of strategy.
 */
export function SettingsBanner() {
  const settings = useQuery(labSettingsQuery());
  const reset = useResetLab();
  const changes = settings.data ? settingsChanges(settings.data) : [];
  return (
    <div className={changes.length > 0 ? "settings-banner changed" : "settings-banner"} data-testid="settings-banner">
      {changes.length > 0 ? (
        <p>
          Not the lab&apos;s defaults:{" "}
          {changes.map((change, index) => (
            <span key={change.path}>
              {index > 0 && "; "}
              <code>{change.path}</code> {shown(change.value)} (default {shown(change.defaultValue)})
            </span>
          ))}
          .
        </p>
      ) : (
        settings.data && <p>The lab runs its default settings.</p>
      )}
      <button type="button" className="quiet" onClick={() => reset.mutate()} disabled={reset.isPending}>
        Reset the lab
      </button>
      {reset.error && <p role="alert">{reset.error.message}</p>}
    </div>
  );
}
