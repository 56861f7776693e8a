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
    onSuccess: (next) => queryClient.setQueryData(queryKeys.labSettings, next),
  });
  return { settings: settings.data, error: settings.error, update };
}
