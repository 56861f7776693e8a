"use client";

import { useQueryClient, type QueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type {
  AuditReport,
  Lane,
  LabSettings,
  LeaseRow,
  OperationEvent,
  PoolMessage,
  ProviderCall,
  ProviderState,
  Timeline,
} from "./api";
import { appendOrReread } from "./append-or-reread";
import { queryKeys, readAgainAfterAnswers } from "./queries";
import { replaceRead } from "./replace-read";
import { laneStreamed, upsertLane } from "./timeline-lanes";

type Handlers = Record<string, (queryClient: QueryClient, data: never) => void>;

const handlers = {
  operation: (queryClient, lane: Lane) => {
    const known = queryClient.getQueryData<Timeline>(queryKeys.timeline)?.operations ?? [];
    laneStreamed(lane);
    queryClient.setQueryData<Timeline>(queryKeys.timeline, (timeline) => upsertLane(timeline, lane));
    readAgainAfterAnswers(queryClient, known, [lane]);
  },
  lease: (queryClient, lease: LeaseRow) => {
    queryClient.setQueryData(queryKeys.lease(lease.userId), lease);
    // A lease taken or cleared: who holds what is read again (the message is one row; the panel is every row).
    void queryClient.invalidateQueries({ queryKey: queryKeys.holders });
  },
  audit: (queryClient, audit: AuditReport) => void replaceRead(queryClient, queryKeys.audit, audit),
  settings: (queryClient, settings: LabSettings) => void replaceRead(queryClient, queryKeys.labSettings, settings),
  pool: (queryClient, pool: PoolMessage) => void replaceRead(queryClient, queryKeys.pool, pool),
  "provider-call": (queryClient, call: ProviderCall) =>
    appendOrReread(queryClient, queryKeys.provider, call, {
      rows: (state: ProviderState) => state.calls,
      adding: (state, added) => ({ ...state, calls: [...state.calls, added].slice(-300) }),
    }),
  event: (queryClient, event: OperationEvent) =>
    appendOrReread(queryClient, queryKeys.events(event.userId), event, {
      rows: (list: { events: OperationEvent[] }) => list.events,
      adding: (list, added) => ({ events: [added, ...list.events].slice(0, 30) }),
    }),
  // A lab reset: everything is read again.
  reset: (queryClient) => void queryClient.invalidateQueries(),
  // Notifications the server may have missed, or a snapshot's end: what the page reads by itself is read again
  // (its lanes, leases, audit, settings and pool come in the stream's snapshot).
  resync: (queryClient) => {
    for (const queryKey of [queryKeys.users, queryKeys.provider, queryKeys.allEvents, queryKeys.holders])
      void queryClient.invalidateQueries({ queryKey });
  },
} satisfies Handlers;

/**
 * Follows `GET /api/lab/stream` for as long as the page is open: each message updates the query cache,
 * so that nothing polls. EventSource reconnects by itself, resuming after the last message's id.
 * Returns where the stream is: live once the stream says it has caught up (what was missed, or a snapshot whose
 * `resync` has the page's own reads asked for again, came first), not as it opens; until then connecting, or
 * reconnecting if it was live before.
 */
export type StreamState = "connecting" | "live" | "reconnecting";

export function useLabStream(): StreamState {
  const queryClient = useQueryClient();
  const [state, setState] = useState<StreamState>("connecting");
  useEffect(() => {
    const source = new EventSource("/api/lab/stream");
    let wasLive = false;
    source.onerror = () => setState(wasLive ? "reconnecting" : "connecting");
    for (const [event, handle] of Object.entries(handlers) as [
      string,
      (client: QueryClient, data: unknown) => void,
    ][]) {
      source.addEventListener(event, (message) =>
        handle(queryClient, JSON.parse((message as MessageEvent<string>).data)),
      );
    }
    source.addEventListener("caught-up", () => {
      wasLive = true;
      setState("live");
    });
    return () => source.close();
  }, [queryClient]);
  return state;
}
