/** The page's calls to the app's HTTP API, with problem+json errors as typed values. */
import { recordServed } from "./served-by";

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  [extension: string]: unknown;
}

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.title);
  }
}

export async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(path, {
    ...init,
    headers: init.body ? { "Content-Type": "application/json", ...init.headers } : init.headers,
  });
  recordServed(init.method ?? "GET", path, response);
  if (response.status === 204) return undefined as T;
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    throw new ApiError(
      body ?? { type: "about:blank", title: response.statusText, status: response.status, detail: "" },
    );
  }
  return body as T;
}

// Types only (erased at build): the page shares the server's shapes without bundling server code.
export type { AuditReport, Finding, UserAudit } from "@/lib/lab/audit";
export type { PoolStats } from "@/lib/core/db";
export type { OperationEvent } from "@/lib/switch/events";
export type { BurstReport } from "@/lib/lab/burst";
export type { Instances } from "@/lib/lab/instances";
export type { LabPreset } from "@/lib/lab/presets";
export type { HoldersView } from "@/lib/lab/holders";
export type { SpanView } from "@/lib/lab/recent-spans";
export type { LabSettings, StallPoint, Strategy } from "@/lib/lab/settings-schema";
export type { ProviderEndpoint, ScriptedOutcome } from "@/lib/provider-sim/chaos-settings";
export type { ProviderCall, ProviderState } from "@/lib/provider-sim/lab-client";
export type { PromoteResult } from "@/lib/switch/switch-primary";
export type { UserView } from "@/lib/switch/user-view";

export type { Lane, LaneLease, Phase, PhaseName } from "@/lib/lab/lane";

/** The timeline's lanes, and how far the database's clock is ahead of this browser's. */
export interface Timeline {
  operations: import("@/lib/lab/lane").Lane[];
  clockOffsetMs: number;
}

/** A user's lease row, as the stream's `lease` message carries it. */
export interface LeaseRow {
  userId: string;
  held: boolean;
  lockedAt: string | null;
  expiresAt: string | null;
  fence: string;
  token: string | null;
  operationId: string | null;
}

/** This instance's pool, as the stream's `pool` message carries it. */
export type PoolMessage = import("@/lib/core/db").PoolStats & { instance: string };

export interface UserSummary {
  id: string;
  displayName: string;
}
