/**
 * The ports test apps listen on, from one small pool of 88 at `TEST_PORT_BASE` (default 3230): a block per
 * worker, so that files running side by side never start two apps on one port. Vitest's 4 workers take blocks
 * of 15 from the base, Playwright's 4 blocks of 7 after them. Within a block each port has one role, named by
 * the variable the tests read: a test that starts an extra app takes its port from `process.env`, which the
 * worker's set-up fills from its block. A new role takes a free slot (null) of its runner's block.
 */
const blocks = {
  vitest: {
    first: 0,
    roles: [
      "TEST_APP_PORT",
      "CRASH_APP_PORT",
      "NO_LAB_APP_PORT",
      "PEER_APP_PORT",
      "NO_DB_APP_PORT",
      "MODEL_APP_PORT",
      "RELAY_APP_PORT",
      // RELAY_APP_PORT + 1: the relay test's second instance.
      null,
      "POOLED_APP_PORT",
      "REDIS_APP_PORT",
      "PGBOUNCER_PORT",
      "REDIS_PORT",
      "BALANCER_PORT",
      // BALANCER_PORT + 1 and + 2: the balanced instances.
      null,
      null,
    ],
  },
  playwright: {
    first: 60,
    roles: [
      "E2E_APP_PORT",
      "PEER_APP_PORT",
      "RELAY_APP_PORT",
      // RELAY_APP_PORT + 1: the relay test's second instance.
      null,
      "PARTS_APP_PORT",
      "PARTS_PGBOUNCER_PORT",
      "PARTS_REDIS_PORT",
    ],
  },
} as const;
type Runner = keyof typeof blocks;
export type PortRole<R extends Runner = Runner> = Exclude<(typeof blocks)[R]["roles"][number], null>;

/** Workers per runner that the pool has blocks for. */
export const workersPerRunner = 4;

/** The ports of one worker: `worker` counts from 0, below `workersPerRunner`. */
export function workerPorts<R extends Runner>(runner: R, worker: number): Record<PortRole<R>, number> {
  if (!Number.isInteger(worker) || worker < 0 || worker >= workersPerRunner)
    throw new Error(`worker ${worker}: the port pool has blocks for ${workersPerRunner} ${runner} workers`);
  const { first, roles } = blocks[runner];
  const base = Number(process.env.TEST_PORT_BASE ?? 3230) + first + worker * roles.length;
  const ports: Record<string, number> = {};
  (roles as readonly (string | null)[]).forEach((role, offset) => {
    if (role) ports[role] = base + offset;
  });
  return ports as Record<PortRole<R>, number>;
}

/** Puts a worker's ports into `process.env`, where the tests read them. */
export function usePorts(ports: Record<string, number>): void {
  for (const [role, port] of Object.entries(ports)) process.env[role] = String(port);
}
