/**
 * What a run records for its replay, as `lab.ts` drives it: the variants (each `fresh()` opens one, the
 * next closes it: its lanes are read then, before the reset wipes them), each request's invocation and
 * completion, what the provider, the user row and the lease were after each answer, and the facts the
 * experiment measured itself (`mark`). Each variant's caption is written once the run is over, when what
 * sets each one apart from the others is known.
 */
import type { Lane } from "../lane";
import type { LabSettings } from "../settings-schema";
import { captionsOf } from "./captions";
import { readLanes, readSnapshot, type RecordedRequest } from "./run-reads";
import type { HistoryOp, RunSnapshot, RunVariant } from "./runs";

/**
 * Jepsen's completion types: `ok` it happened; `fail` it certainly did not (refused before any effect:
 * bad input, or another operation held the lease); `info` anything else, whose effect is unknown or partial
 * (a 504, a lost connection, a provider step failed, a write refused after the provider had changed).
 */
export function completionType(status: number, problemType: string | null): HistoryOp["type"] {
  if (status >= 200 && status < 300) return "ok";
  if ([400, 401, 403, 404, 422].includes(status)) return "fail";
  if (status === 409 && problemType === "operation-in-progress") return "fail";
  return "info";
}

/** A fact the experiment measured itself (a lock left granted, a restart), on the lane it concerns. */
export interface MeasuredFact {
  at: string;
  operationId: string;
  what: string;
}

/** A variant while the run records it: the settings it started with and the experiment's words for it. */
interface RecordingVariant extends RunVariant {
  settings: LabSettings | null;
  note: string | null;
}

const logReadFailure = (error: unknown) => console.error("[experiment] could not read the state:", error);

/** The variants as saved: each with its caption, told apart by what it ran with. */
function captioned(variants: RecordingVariant[]): RunVariant[] {
  const withSettings = variants.filter((variant) => variant.settings !== null);
  const captions = captionsOf(withSettings.map((variant) => ({ settings: variant.settings!, note: variant.note })));
  return variants.map((variant) => {
    const { label, startedAt, endedAt, operationIds } = variant;
    return { label, startedAt, endedAt, operationIds, ...captions[withSettings.indexOf(variant)] };
  });
}

interface Answer {
  status: number;
  problemType: string | null;
}

/** The run's requests in Jepsen's form (an invocation, then its completion), and what each asked and got. */
function requestLog() {
  const history: HistoryOp[] = [];
  const requests = new Map<string, RecordedRequest>();
  return {
    history,
    requests,
    invoke(operationId: string, label: string, f: HistoryOp["f"], value: Record<string, unknown>): number {
      const invokedAt = new Date().toISOString();
      const toIdentityId = typeof value.identityId === "string" ? value.identityId : null;
      requests.set(operationId, { operationId, label, f, toIdentityId, invokedAt, answeredAt: null, status: null });
      const process = history.filter((op) => op.type === "invoke").length;
      history.push({ process, type: "invoke", f, value, at: invokedAt, operationId, label });
      return process;
    },
    complete(process: number, request: { operationId: string; label: string; f: HistoryOp["f"] }, answer: Answer) {
      const at = new Date().toISOString();
      Object.assign(requests.get(request.operationId)!, { answeredAt: at, status: answer.status });
      const type = completionType(answer.status, answer.problemType);
      const value = { status: answer.status, problemType: answer.problemType };
      history.push({ process, type, f: request.f, value, at, operationId: request.operationId, label: request.label });
    },
  };
}

/** Reads the state after an answer: answers that come together share one read, and the reads run in turn. */
function readQueue(read: () => Promise<void>) {
  let reading: Promise<void> = Promise.resolve();
  let queued = false;
  return {
    soon(): void {
      if (queued) return;
      queued = true;
      reading = reading.then(() => {
        queued = false;
        return read();
      });
    },
    done: () => reading,
  };
}

/** Records a run on `userId`, whose provider accounts are those holding one of `identityIds`. */
export function runRecorder(userId: string, identityIds: readonly string[]) {
  const variants: RecordingVariant[] = [];
  const snapshots: RunSnapshot[] = [];
  const lanes: Lane[] = [];
  const measured: MeasuredFact[] = [];
  const log = requestLog();
  let open: RecordingVariant | null = null;
  const snapshot = (withAudit: boolean) =>
    readSnapshot(userId, identityIds, withAudit).then((read) => void snapshots.push(read), logReadFailure);
  const reads = readQueue(() => snapshot(false));

  async function closeVariant(): Promise<void> {
    await reads.done();
    if (!open) return;
    const variant = open;
    open = null;
    variant.endedAt = new Date().toISOString();
    await snapshot(true);
    lanes.push(...(await readLanes(userId, variant.operationIds, log.requests)));
  }

  function belongs(operationId: string): void {
    if (!open) {
      const startedAt = new Date().toISOString();
      // Labels are distinct within a run (the contract's, and the importer checks it): a second stretch of
      // operations outside any variant is named apart from the first.
      const unset = variants.filter((variant) => variant.settings === null).length;
      const label = unset === 0 ? "the run" : `the run, part ${unset + 1}`;
      open = { label, startedAt, endedAt: "", operationIds: [], settings: null, note: null };
      variants.push(open);
    }
    open.operationIds.push(operationId);
  }

  return {
    /** A variant starts, from the seed with these settings; `note` names what no setting says. */
    async openVariant(settings: LabSettings, note: string | null): Promise<void> {
      open = { label: "", startedAt: new Date().toISOString(), endedAt: "", operationIds: [], settings, note };
      variants.push(open);
      await snapshot(false);
    },
    closeVariant,
    note: belongs,
    mark: (operationId: string, what: string, at = new Date()) =>
      void measured.push({ at: at.toISOString(), operationId, what }),
    invoke(...request: Parameters<typeof log.invoke>): number {
      belongs(request[0]);
      return log.invoke(...request);
    },
    complete(...answered: Parameters<typeof log.complete>): void {
      log.complete(...answered);
      reads.soon();
    },
    async finish() {
      await closeVariant();
      return { variants: captioned(variants), history: log.history, snapshots, lanes, measured };
    },
  };
}
