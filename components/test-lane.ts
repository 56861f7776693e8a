import type { Lane } from "./api";

/** A lane for the page's unit tests: `userId`'s switch, running or answered. */
export const testLane = (operationId: string, answered: boolean, userId = "ada"): Lane => ({
  operationId,
  userId,
  instance: "1",
  strategy: "lease",
  toIdentityId: "github|8812",
  requestedAt: "2026-12-07T12:00:00.000Z",
  answeredAt: answered ? "2026-12-07T12:00:01.000Z" : null,
  status: answered ? 200 : null,
  problemType: null,
  phases: [],
  lease: null,
});
