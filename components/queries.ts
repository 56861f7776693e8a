/**
 * Every query the page makes: its key, its fetch and its polling, defined once. Keys are hierarchical so
 * that a prefix invalidates a family: ["lab"] is everything the lab shows, ["users", userId] one user.
 */
import { queryOptions, type QueryClient } from "@tanstack/react-query";
import {
  api,
  ApiError,
  type AuditReport,
  type LabPreset,
  type LabSettings,
  type OperationEvent,
  type PoolStats,
  type ProviderState,
  type UserSummary,
  type UserView,
} from "./api";

export const queryKeys = {
  session: ["session"] as const,
  users: ["users"] as const,
  user: (userId: string) => ["users", userId] as const,
  lab: ["lab"] as const,
  labSettings: ["lab", "settings"] as const,
  audit: ["lab", "audit"] as const,
  provider: ["lab", "provider"] as const,
  pool: ["lab", "pool"] as const,
  presets: ["lab", "presets"] as const,
  events: (userId: string) => ["lab", "events", userId] as const,
};

/** The signed-in user, or null when there is no session. */
export const sessionQuery = () =>
  queryOptions({
    queryKey: queryKeys.session,
    queryFn: () =>
      api<{ userId: string }>("/api/session").catch((error: unknown) => {
        if (error instanceof ApiError && error.problem.status === 401) return null;
        throw error;
      }),
  });

export const usersQuery = () =>
  queryOptions({ queryKey: queryKeys.users, queryFn: () => api<{ users: UserSummary[] }>("/api/users") });

/** Polled so that a switch made in another tab (or still running) shows up here. */
export const userQuery = (userId: string) =>
  queryOptions({
    queryKey: queryKeys.user(userId),
    queryFn: () => api<UserView>(`/api/users/${userId}`),
    refetchInterval: 1000,
  });

/** The shared lab settings, polled so that a change made in another tab shows up. */
export const labSettingsQuery = () =>
  queryOptions({ queryKey: queryKeys.labSettings, queryFn: () => api<LabSettings>("/api/lab"), refetchInterval: 2000 });

export const auditQuery = () =>
  queryOptions({ queryKey: queryKeys.audit, queryFn: () => api<AuditReport>("/api/lab/audit"), refetchInterval: 1000 });

export const providerQuery = () =>
  queryOptions({
    queryKey: queryKeys.provider,
    queryFn: () => api<ProviderState>("/api/lab/provider"),
    refetchInterval: 1000,
  });

/** Polled fast: a pool exhausted by a slow provider call lasts only as long as the call. */
export const poolQuery = () =>
  queryOptions({ queryKey: queryKeys.pool, queryFn: () => api<PoolStats>("/api/lab/pool"), refetchInterval: 300 });

export const presetsQuery = () =>
  queryOptions({ queryKey: queryKeys.presets, queryFn: () => api<{ presets: LabPreset[] }>("/api/lab/presets") });

export const eventsQuery = (userId: string) =>
  queryOptions({
    queryKey: queryKeys.events(userId),
    queryFn: () => api<{ events: OperationEvent[] }>(`/api/lab/events?userId=${encodeURIComponent(userId)}`),
    refetchInterval: 1000,
  });

/** A switch changes the user and everything the lab shows about it (audit, provider, events). */
export async function invalidateAfterSwitch(queryClient: QueryClient, userId: string): Promise<void> {
  await Promise.all([
    queryClient.invalidateQueries({ queryKey: queryKeys.user(userId) }),
    queryClient.invalidateQueries({ queryKey: queryKeys.lab }),
  ]);
}
