/**
 * `--ha`: the two PostgreSQL 15 nodes managed by Patroni, with one etcd as its store, and HAProxy sending the
 * database's connections to whichever node Patroni's REST API calls primary. Short `ttl` (5 s) and
 * `loop_wait` (1 s), so a failover after the primary dies takes seconds. Patroni's synchronous mode is on: a
 * commit is acknowledged once the standby has it, and only that standby is promoted, so an acknowledged
 * acquisition survives a failover (Patroni's default, asynchronous, would lose what the standby had not
 * received: see failover-async-loses-lease). Non-strict: a leader left alone commits alone. Everything is
 * fresh at every start, under `.lab/etcd-<port>/` and `.lab/patroni-<port>/`.
 */
import { chownSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { eventLog, onNode, type DatabaseCluster } from "./database-cluster";
import { startDatabaseHaproxy } from "./haproxy";
import {
  endLeftoverPart,
  findProgram,
  killProcessTree,
  partDirectory,
  postgresRunner,
  startPart,
  type RunningPart,
} from "./part-process";
import {
  endLeftoverServer,
  nodeUrl,
  postgresBinDir,
  postgresProgram,
  postmasterOf,
  superuser,
  until,
} from "./postgres-node";
import { replicaPorts } from "./replica";

export const haPorts = () => ({
  ...replicaPorts(),
  apis: [Number(process.env.PATRONI_NODE1_API_PORT ?? 8018), Number(process.env.PATRONI_NODE2_API_PORT ?? 8019)] as [
    number,
    number,
  ],
  etcdClient: Number(process.env.ETCD_CLIENT_PORT ?? 2389),
  etcdPeer: Number(process.env.ETCD_PEER_PORT ?? 2390),
});
export type HaPorts = ReturnType<typeof haPorts>;

const bootLimitMs = 120_000;

async function startEtcd(clientPort: number, peerPort: number): Promise<RunningPart> {
  const program = findProgram("etcd", "etcd-server");
  const name = `etcd-${clientPort}`;
  const dataDir = path.join(partDirectory(name), "data");
  rmSync(dataDir, { recursive: true, force: true });
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  return startPart({
    name,
    program,
    args: [
      ...["--name", "lab", "--data-dir", dataDir],
      ...["--listen-client-urls", client, "--advertise-client-urls", client],
      ...["--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", `lab=${peer}`],
    ],
    port: clientPort,
    ready: async () => (await fetch(`${client}/health`).catch(() => null))?.ok === true,
  });
}

/** Patroni 3.0 calls the leader "master" (later versions "primary"). */
const leads = (state: { role: string } | null): boolean => state?.role === "master" || state?.role === "primary";

/** What a node's Patroni says of it (`GET /patroni`), or null when it does not answer. */
async function patroniState(apiPort: number): Promise<{ role: string; state: string; timeline?: number } | null> {
  const answer = await fetch(`http://127.0.0.1:${apiPort}/patroni`, { signal: AbortSignal.timeout(1_000) }).catch(
    () => null,
  );
  return answer
    ? ((await answer.json().catch(() => null)) as { role: string; state: string; timeline?: number })
    : null;
}

class PatroniNode {
  readonly directory: string;
  readonly dataDir: string;
  private running: RunningPart | null = null;

  constructor(
    readonly name: string,
    readonly port: number,
    readonly apiPort: number,
  ) {
    this.directory = partDirectory(`patroni-${apiPort}`);
    this.dataDir = path.join(this.directory, "data");
  }

  get isRunning(): boolean {
    const child = this.running?.process;
    return !!child && child.exitCode === null && child.signalCode === null;
  }

  /** A fresh configuration and no data (what an earlier run left, still running or not, is ended first). */
  async configure(scope: string, etcdClientPort: number, onRoleChange?: string): Promise<void> {
    await endLeftoverPart(`patroni-${this.apiPort}`, "patroni");
    await endLeftoverServer(this.dataDir);
    rmSync(this.dataDir, { recursive: true, force: true });
    const file = path.join(this.directory, "patroni.yml");
    writeFileSync(file, patroniConfig(this, scope, etcdClientPort, onRoleChange));
    const runner = postgresRunner();
    if (runner) for (const each of [this.directory, file]) chownSync(each, runner.uid, runner.gid);
  }

  async start(): Promise<void> {
    this.running = await startPart({
      name: `patroni-${this.apiPort}`,
      program: findProgram("patroni", "patroni"),
      args: [path.join(this.directory, "patroni.yml")],
      port: this.apiPort,
      runAs: postgresRunner(),
      startLimitMs: 30_000,
    });
  }

  async stop(): Promise<void> {
    await this.running?.stop();
    this.running = null;
  }

  /** Patroni and its PostgreSQL (a daemon of its own, whose pid is in postmaster.pid) die together. */
  async kill(): Promise<void> {
    const child = this.running?.process;
    const postmaster = postmasterOf(this.dataDir);
    if (child?.pid && this.isRunning) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      killProcessTree(child.pid);
      await exited;
    }
    if (postmaster) killProcessTree(postmaster);
    this.running = null;
  }
}

function patroniConfig(node: PatroniNode, scope: string, etcdClientPort: number, onRoleChange?: string): string {
  const auth = (user: string, password: string) => `{ username: ${user}, password: ${password} }`;
  return [
    `scope: ${scope}`,
    `name: ${node.name}`,
    "restapi:",
    `  listen: 127.0.0.1:${node.apiPort}`,
    `  connect_address: 127.0.0.1:${node.apiPort}`,
    "etcd3:",
    `  hosts: 127.0.0.1:${etcdClientPort}`,
    "watchdog:",
    '  mode: "off"', // quoted: YAML reads a bare off as false
    "bootstrap:",
    "  dcs:",
    "    ttl: 5",
    "    loop_wait: 1",
    "    retry_timeout: 2",
    "    maximum_lag_on_failover: 1048576",
    "    synchronous_mode: true",
    "    postgresql:",
    "      use_pg_rewind: true",
    "      remove_data_directory_on_rewind_failure: true",
    "      parameters:",
    "        wal_keep_size: 256MB",
    "        max_connections: 200",
    "  initdb:",
    "    - data-checksums",
    "    - auth: scram-sha-256",
    "postgresql:",
    `  listen: 127.0.0.1:${node.port}`,
    `  connect_address: 127.0.0.1:${node.port}`,
    `  data_dir: ${node.dataDir}`,
    `  bin_dir: ${postgresBinDir()}`,
    `  pgpass: ${path.join(node.directory, "pgpass")}`,
    "  authentication:",
    `    superuser: ${auth(superuser.user, superuser.password)}`,
    `    replication: ${auth("replicator", "replicator")}`,
    `    rewind: ${auth(superuser.user, superuser.password)}`,
    "  parameters:",
    `    unix_socket_directories: ${node.directory}`,
    ...(onRoleChange ? ["  callbacks:", `    on_role_change: ${onRoleChange}`] : []),
    "  pg_hba:",
    "    - local all all trust",
    "    - host all all 127.0.0.1/32 scram-sha-256",
    "    - host replication all 127.0.0.1/32 scram-sha-256",
    "",
  ].join("\n");
}

/** `onRoleChange`: the program a node's Patroni runs at each of its role changes (its on_role_change callback). */
export async function startPatroniCluster(
  ports: HaPorts = haPorts(),
  { onRoleChange }: { onRoleChange?: (node: { name: string; port: number }) => string } = {},
): Promise<DatabaseCluster> {
  postgresProgram("postgres");
  const nodes = [
    new PatroniNode("pg1", ports.nodes[0], ports.apis[0]),
    new PatroniNode("pg2", ports.nodes[1], ports.apis[1]),
  ];
  const log = eventLog();
  const etcd = await startEtcd(ports.etcdClient, ports.etcdPeer);
  const stopNodes = () => Promise.all(nodes.map((node) => node.stop()));
  let haproxy: RunningPart;
  try {
    for (const node of nodes)
      await node.configure(`leaselab-${ports.endpoint}`, ports.etcdClient, onRoleChange?.(node));
    await nodes[0]!.start();
    await until("pg1 leading", async () => leads(await patroniState(ports.apis[0])), bootLimitMs, 250);
    await nodes[1]!.start();
    await until("pg2 a synchronous standby", () => isSyncStandby(nodes[0]!.apiPort, "pg2"), bootLimitMs, 250);
    haproxy = await startDatabaseHaproxy(ports.endpoint, nodes);
    // HAProxy counts every server up until its checks say otherwise (2 of them, a second): until then a
    // connection may reach the standby (25006, read-only). It is ready once connections reach only the primary.
    await until(
      "HAProxy sending connections to the primary only",
      () => onlyPrimaryBehind(ports.endpoint),
      10_000,
      100,
    );
  } catch (error) {
    await stopNodes();
    await etcd.stop();
    throw error;
  }

  const byName = (name: string) => {
    const node = nodes.find((each) => each.name === name);
    if (!node) throw new Error(`no database node ${name}`);
    return node;
  };
  const roleOf = async (node: PatroniNode) => {
    const state = await patroniState(node.apiPort);
    if (!state || state.state !== "running") return null;
    return leads(state) ? ("primary" as const) : ("standby" as const);
  };

  // Watches who leads, to say when a promotion happened (within the 100 ms of a look).
  const leading = new Map<string, boolean>();
  let watching = true;
  void (async () => {
    while (watching) {
      for (const node of nodes) {
        const state = await patroniState(node.apiPort);
        if (leads(state) && leading.get(node.name) === false)
          log.note("promoted", node.name, `${node.name} was promoted by Patroni (timeline ${state?.timeline ?? "?"})`);
        if (state) leading.set(node.name, leads(state));
      }
      await new Promise((resolve) => setTimeout(resolve, 100).unref());
    }
  })();

  /** A killed node's Patroni starts again once another node leads, as after its machine restarts. */
  const restarting = new Map<string, Promise<void>>();
  async function restartAfterFailover(node: PatroniNode): Promise<void> {
    const other = nodes.find((each) => each !== node)!;
    await until(`${other.name} leading`, async () => (await roleOf(other)) === "primary", bootLimitMs, 200);
    await node.start();
  }

  return {
    shape: "ha",
    url: (database) => nodeUrl(ports.endpoint, database),
    mode: () => "sync",
    async nodes() {
      return Promise.all(
        nodes.map(async (node) => ({ name: node.name, url: nodeUrl(node.port), role: await roleOf(node) })),
      );
    },
    events: () => log.events,
    async kill(name) {
      const node = byName(name);
      await node.kill();
      leading.set(name, false);
      log.note("killed", name, `${name} was killed (SIGKILL to Patroni and all of PostgreSQL's processes)`);
      restarting.set(
        name,
        restartAfterFailover(node).catch((error: unknown) =>
          console.error(`[database] ${name} did not restart:`, error),
        ),
      );
    },
    promote: () => Promise.reject(new Error("under --ha, Patroni promotes: kill the primary instead")),
    async rejoin(name) {
      const node = byName(name);
      await restarting.get(name);
      if (!node.isRunning) await restartAfterFailover(node);
      const other = nodes.find((each) => each !== node)!;
      await until(`${name} a synchronous standby`, () => isSyncStandby(other.apiPort, name), bootLimitMs, 250);
      log.note("rejoined", name, `${name} follows ${other.name} again (Patroni, pg_rewind)`);
      return "restarted";
    },
    pauseReplication: () => Promise.reject(new Error("under --ha, replication is Patroni's")),
    resumeReplication: () => Promise.reject(new Error("under --ha, replication is Patroni's")),
    setMode: () => Promise.reject(new Error("under --ha, Patroni's synchronous mode is on")),
    async stop() {
      watching = false;
      await haproxy.stop();
      await stopNodes();
      await etcd.stop();
    },
  };
}

/** Whether 5 connections in a row through `port` reach a primary. */
async function onlyPrimaryBehind(port: number): Promise<boolean> {
  for (let connection = 0; connection < 5; connection++) {
    const rows = await onNode<{ primary: boolean }>(nodeUrl(port), "SELECT NOT pg_is_in_recovery() AS primary").catch(
      () => [],
    );
    if (rows[0]?.primary !== true) return false;
  }
  return true;
}

/** Whether `name` is the synchronous standby in the cluster as the Patroni at `apiPort` lists it. */
async function isSyncStandby(apiPort: number, name: string): Promise<boolean> {
  const answer = await fetch(`http://127.0.0.1:${apiPort}/cluster`, { signal: AbortSignal.timeout(1_000) }).catch(
    () => null,
  );
  const cluster = (await answer?.json().catch(() => null)) as {
    members?: { name: string; role: string; state: string }[];
  } | null;
  return (
    cluster?.members?.some(
      (member) => member.name === name && member.role === "sync_standby" && member.state === "running",
    ) === true
  );
}
