/** The experiments' HTTP shapes, as the Learn view reads them. */
export interface ExperimentCard {
  id: string;
  title: string;
  question: string;
  failureMode: string | null;
  expected: string;
  tryNext: string;
}

export interface ExperimentRun {
  id: string;
  startedAt: string;
  endedAt: string;
  operationIds: string[];
  observed: Record<string, unknown>;
  verdict: "as-expected" | "unexpected";
  explanation: string;
}

export interface ProviderCall {
  at: string;
  method: string;
  path: string;
  status: number;
  outcome: string | null;
  operationId: string | null;
  durationMs: number;
}
