"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, queryKeys, type LabSettings } from "./api";

/** The shared lab settings, polled so that a change made in another tab shows up, and their update. */
export function useLabSettings() {
  const queryClient = useQueryClient();
  const settings = useQuery({
    queryKey: queryKeys.lab,
    queryFn: () => api<LabSettings>("/api/lab"),
    refetchInterval: 2000,
  });
  const update = useMutation({
    mutationFn: (patch: unknown) => api<LabSettings>("/api/lab", { method: "PUT", body: JSON.stringify(patch) }),
    onSuccess: (next) => queryClient.setQueryData(queryKeys.lab, next),
  });
  return { settings: settings.data, error: settings.error, update };
}
