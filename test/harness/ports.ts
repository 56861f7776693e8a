/**
 * The ports test apps listen on, from one small pool at `TEST_PORT_BASE` (default 3230): a block of ten per
 * worker, so that files running side by side never start two apps on one port. Vitest's workers take blocks
 * 0–3, Playwright's 4–7. Within a block each port has one role, named by the variable the tests read (a test
 * that starts an extra app takes its port from `process.env`, which the worker's set-up fills from its block).
 */
const roles = [
  "TEST_APP_PORT",
  "CRASH_APP_PORT",
  "NO_LAB_APP_PORT",
  "PEER_APP_PORT",
  "NO_DB_APP_PORT",
  "MODEL_APP_PORT",
  "RELAY_APP_PORT",
  // RELAY_APP_PORT + 1: the relay test's second instance.
  null,
  "E2E_APP_PORT",
  null,
] as const;
export type PortRole = Exclude<(typeof roles)[number], null>;

/** Workers per runner that the pool has blocks for. */
export const workersPerRunner = 4;
const runners = { vitest: 0, playwright: 1 } as const;

/** The ports of one worker: `worker` counts from 0, below `workersPerRunner`. */
export function workerPorts(runner: keyof typeof runners, worker: number): Record<PortRole, number> {
  if (!Number.isInteger(worker) || worker < 0 || worker >= workersPerRunner)
    throw new Error(`worker ${worker}: the port pool has blocks for ${workersPerRunner} ${runner} workers`);
  const base =
    Number(process.env.TEST_PORT_BASE ?? 3230) + (runners[runner] * workersPerRunner + worker) * roles.length;
  const ports = {} as Record<PortRole, number>;
  roles.forEach((role, offset) => {
    if (role) ports[role] = base + offset;
  });
  return ports;
}

/** Puts a worker's ports into `process.env`, where the tests read them. */
export function usePorts(ports: Record<PortRole, number>): void {
  for (const [role, port] of Object.entries(ports)) process.env[role] = String(port);
}
