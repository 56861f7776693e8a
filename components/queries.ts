/**
 * Every query the page makes: its key and its fetch, defined once. Keys are hierarchical so that a prefix
 * invalidates a family: ["lab"] is everything the lab shows, ["users", userId] one user. Nothing polls:
 * after the first fetch, the lab's event stream (useLabStream) keeps these up to date.
 */
import { queryOptions, type QueryClient } from "@tanstack/react-query";
import {
  api,
  ApiError,
  type AuditReport,
  type HoldersView,
  type Instances,
  type LabPreset,
  type LabSettings,
  type Lane,
  type LeaseRow,
  type OperationEvent,
  type PoolStats,
  type SpanView,
  type ProviderState,
  type Timeline,
  type UserSummary,
  type UserView,
} from "./api";
import { answeredSince, readingLanes } from "./timeline-lanes";

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
  /** Every user's events (a prefix of `events(userId)`). */
  allEvents: ["lab", "events"] as const,
  events: (userId: string) => ["lab", "events", userId] as const,
  timeline: ["lab", "timeline"] as const,
  instances: ["lab", "instances"] as const,
  lease: (userId: string) => ["lab", "lease", userId] as const,
  holders: ["lab", "holders"] as const,
  spans: (operationId: string, answeredAt: string | null) => ["lab", "spans", operationId, answeredAt] as const,
};

/** Fed by the stream: fetched once, never stale on its own. */
const live = { staleTime: Infinity } as const;

/** When each user's view was last asked for, to tell how long a read has been waiting. */
export const userReadStartedAt = new Map<string, number>();

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

/** Read again when one of the user's operations answers (the stream says when). */
export const userQuery = (userId: string) =>
  queryOptions({
    queryKey: queryKeys.user(userId),
    queryFn: async () => {
      const startedAt = Date.now();
      const view = await api<UserView>(`/api/users/${userId}`);
      // Only a read that landed is one: a failed one leaves the view as it was, from an earlier read. A read
      // cancelled for a later one may still land after it (its answer ignored): the later start stays.
      userReadStartedAt.set(userId, Math.max(startedAt, userReadStartedAt.get(userId) ?? 0));
      return view;
    },
    ...live,
  });

export const labSettingsQuery = () =>
  queryOptions({ queryKey: queryKeys.labSettings, queryFn: () => api<LabSettings>("/api/lab"), ...live });

export const auditQuery = () =>
  queryOptions({ queryKey: queryKeys.audit, queryFn: () => api<AuditReport>("/api/lab/audit"), ...live });

export const providerQuery = () =>
  queryOptions({ queryKey: queryKeys.provider, queryFn: () => api<ProviderState>("/api/lab/provider"), ...live });

export const poolQuery = () =>
  queryOptions({ queryKey: queryKeys.pool, queryFn: () => api<PoolStats>("/api/lab/pool"), ...live });

/**
 * An answer changes its user's identities and the provider's accounts: they are read again once the page first sees
 * it, whether a message or a read of the timeline brings it (the message then finds it answered already).
 */
export function readAgainAfterAnswers(queryClient: QueryClient, known: Lane[], lanes: Lane[]): void {
  const answered = answeredSince(known, lanes);
  if (answered.length === 0) return;
  for (const userId of new Set(answered.map((lane) => lane.userId)))
    void queryClient.invalidateQueries({ queryKey: queryKeys.user(userId) });
  void queryClient.invalidateQueries({ queryKey: queryKeys.provider });
}

/**
 * Ten minutes of lanes, all users; the stream adds and updates lanes from then on. A read again (after a reset, a
 * start-over) may bring answers the page had not seen; the first read has the page's other first reads beside it.
 */
export const timelineQuery = () =>
  queryOptions({
    queryKey: queryKeys.timeline,
    // A read cancelled for a later one (a reset asks for everything again) ends there: it judges no answers.
    queryFn: async ({ client, signal }): Promise<Timeline> => {
      const timeline = await readingLanes(() =>
        api<{ now: string; operations: Timeline["operations"] }>("/api/lab/timeline?sinceMs=600000", { signal }),
      );
      const known = client.getQueryData<Timeline>(queryKeys.timeline)?.operations;
      if (known) readAgainAfterAnswers(client, known, timeline.operations);
      return { operations: timeline.operations, clockOffsetMs: Date.parse(timeline.now) - Date.now() };
    },
    ...live,
  });

/** The user's lease row as the database last said: only ever filled by the stream. */
export const leaseQuery = (userId: string) =>
  queryOptions({
    queryKey: queryKeys.lease(userId),
    queryFn: (): LeaseRow | null => null,
    enabled: false,
    ...live,
  });
/** Which instance served the page and its peers: fixed for the life of the processes. */
export const instancesQuery = () =>
  queryOptions({ queryKey: queryKeys.instances, queryFn: () => api<Instances>("/api/lab/instances"), ...live });

export const presetsQuery = () =>
  queryOptions({ queryKey: queryKeys.presets, queryFn: () => api<{ presets: LabPreset[] }>("/api/lab/presets") });

export const eventsQuery = (userId: string) =>
  queryOptions({
    queryKey: queryKeys.events(userId),
    queryFn: () => api<{ events: OperationEvent[] }>(`/api/lab/events?userId=${encodeURIComponent(userId)}`),
    ...live,
  });

/** Who holds a lease now, read again on each of the stream's lease messages. */
export const holdersQuery = () =>
  queryOptions({ queryKey: queryKeys.holders, queryFn: () => api<HoldersView>("/api/lab/holders"), ...live });

/**
 * An operation's finished spans, as the instance that answers remembers them; null when it has none (404). Keyed
 * by the lane's answer too: read again once the operation has answered, when its last spans have ended.
 */
export const spansQuery = (operationId: string, answeredAt: string | null) =>
  queryOptions({
    queryKey: queryKeys.spans(operationId, answeredAt),
    queryFn: () =>
      api<{ spans: SpanView[] }>(`/api/lab/operations/${encodeURIComponent(operationId)}/spans`).then(
        ({ spans }) => spans,
        (error: unknown) => {
          if (error instanceof ApiError && error.problem.status === 404) return null;
          throw error;
        },
      ),
  });
