"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, type LabSettings } from "./api";
import { labSettingsQuery, queryKeys } from "./queries";

/** The shared lab settings and their update. */
export function useLabSettings() {
  const queryClient = useQueryClient();
  const settings = useQuery(labSettingsQuery());
  const update = useMutation({
    mutationFn: (patch: unknown) => api<LabSettings>("/api/lab", { method: "PUT", body: JSON.stringify(patch) }),
    // Read again rather than set: the answer waits for the other instances, and a change made meanwhile (a one-shot
    // fault taken, another tab's) may have been streamed already; a newer message replaces this read too.
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.labSettings, exact: true }),
  });
  return { settings: settings.data, error: settings.error, update };
}

/** `POST /api/lab/reset`: the defaults and the seed's users, at the provider too; every query read again. */
export function useResetLab() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => api<void>("/api/lab/reset", { method: "POST" }),
    onSuccess: () => queryClient.invalidateQueries(),
  });
}
