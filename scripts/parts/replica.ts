/**
 * `--replica async|sync`: a primary and one streaming standby (`pg_basebackup -R`) of Debian's PostgreSQL 15,
 * fresh at every start, behind the endpoint (db-endpoint.ts) that follows the primary. No HA engine: a
 * promotion happens when someone asks (the experiments, or `pg_ctl promote` by hand), as with a plain
 * replica. `sync` makes the primary wait, at every commit, until the standby has applied it
 * (`synchronous_standby_names = '*'`, `synchronous_commit = remote_apply`: a read on the standby after an
 * acquire sees it). A primary left without a standby (it was promoted, the other node is dead) runs
 * asynchronously until one streams again, as Patroni's non-strict synchronous mode does, and says so.
 */
import { startDbEndpoint } from "./db-endpoint";
import { eventLog, onNode, type DatabaseCluster, type ReplicationMode } from "./database-cluster";
import { nodeUrl, PostgresNode, primaryConninfo, until } from "./postgres-node";

export interface ReplicaPorts {
  nodes: [number, number];
  endpoint: number;
}

/** The ports of `--replica` and `--ha`: PG_NODE1_PORT, PG_NODE2_PORT, DB_BALANCER_PORT (6441, 6442, 6440). */
export const replicaPorts = (): ReplicaPorts => ({
  nodes: [Number(process.env.PG_NODE1_PORT ?? 6441), Number(process.env.PG_NODE2_PORT ?? 6442)],
  endpoint: Number(process.env.DB_BALANCER_PORT ?? 6440),
});

const streamingLimitMs = 30_000;

export async function startReplicaPair(initialMode: ReplicationMode, ports = replicaPorts()): Promise<DatabaseCluster> {
  const nodes = [new PostgresNode("pg1", ports.nodes[0]), new PostgresNode("pg2", ports.nodes[1])];
  const log = eventLog();
  let mode = initialMode;
  const stopAll = () => Promise.all(nodes.map((node) => node.stop()));
  try {
    await nodes[0]!.initialise([]);
    await nodes[0]!.start();
    await nodes[1]!.cloneFrom(nodes[0]!.port);
    await nodes[1]!.start();
  } catch (error) {
    await stopAll();
    throw error;
  }
  const endpoint = await startDbEndpoint(
    ports.endpoint,
    nodes.map((node) => ({ name: node.name, port: node.port, url: node.url() })),
  );

  const byName = (name: string) => {
    const node = nodes.find((each) => each.name === name);
    if (!node) throw new Error(`no database node ${name}`);
    return node;
  };
  const primary = async () => {
    for (const node of nodes) if (node.isRunning && (await node.inRecovery()) === false) return node;
    throw new Error("no node is the primary now");
  };
  const standby = async () => {
    for (const node of nodes) if (node.isRunning && (await node.inRecovery()) === true) return node;
    throw new Error("no node is a standby now");
  };
  const streams = async (from: PostgresNode) =>
    (await onNode(from.url(), "SELECT 1 FROM pg_stat_replication WHERE state = 'streaming'")).length > 0;
  // One statement at a time: ALTER SYSTEM cannot run in the implicit transaction of a multi-statement query.
  const reload = async (node: PostgresNode, settings: string[]) => {
    for (const statement of [...settings, "SELECT pg_reload_conf()"]) await onNode(node.url(), statement);
  };

  /** The mode, as the primary runs it now: with no standby streaming, a sync primary would wait for ever. */
  async function applyMode(): Promise<void> {
    const current = await primary();
    const waits = mode === "sync" && (await streams(current));
    await reload(current, [
      `ALTER SYSTEM SET synchronous_standby_names = '${waits ? "*" : ""}'`,
      `ALTER SYSTEM SET synchronous_commit = '${waits ? "remote_apply" : "on"}'`,
    ]);
    if (mode === "sync" && !waits)
      log.note(
        "mode-changed",
        current.name,
        `${current.name} has no standby: it commits alone until one streams again`,
      );
  }

  await until(`${nodes[1]!.name} streaming from ${nodes[0]!.name}`, () => streams(nodes[0]!), streamingLimitMs);
  await applyMode();

  return {
    shape: "replica",
    url: (database) => nodeUrl(ports.endpoint, database),
    mode: () => mode,
    async nodes() {
      return Promise.all(
        nodes.map(async (node) => {
          const standby = node.isRunning ? await node.inRecovery() : null;
          return { name: node.name, url: node.url(), role: standby === null ? null : standby ? "standby" : "primary" };
        }),
      );
    },
    events: () => log.events,
    async kill(name) {
      await byName(name).kill();
      log.note("killed", name, `${name} was killed (SIGKILL to all its processes)`);
    },
    async promote(name) {
      const node = byName(name);
      await node.promote();
      log.note("promoted", name, `${name} was promoted (pg_ctl promote)`);
      await applyMode();
      await until(`the endpoint following ${name}`, async () => endpoint.primary()?.name === name, 5_000, 20);
    },
    async rejoin(name) {
      const node = byName(name);
      const current = await primary();
      const how = await node.rejoinAsStandbyOf(current.port);
      await node.start();
      await until(`${name} streaming from ${current.name}`, () => streams(current), streamingLimitMs);
      await applyMode();
      log.note("rejoined", name, `${name} follows ${current.name} again (${how})`);
      return how;
    },
    async pauseReplication() {
      const node = await standby();
      const current = await primary();
      await reload(node, ["ALTER SYSTEM SET primary_conninfo = ''"]);
      await until(`${node.name} no longer streaming`, async () => !(await streams(current)), 10_000, 20);
      log.note("replication-paused", node.name, `${node.name} stopped receiving WAL (primary_conninfo emptied)`);
    },
    async resumeReplication() {
      const node = await standby();
      const current = await primary();
      await reload(node, [`ALTER SYSTEM SET primary_conninfo = '${primaryConninfo(current.port)}'`]);
      await until(`${node.name} streaming again`, () => streams(current), streamingLimitMs);
      log.note("replication-resumed", node.name, `${node.name} receives WAL from ${current.name} again`);
    },
    async setMode(next) {
      mode = next;
      await applyMode();
      log.note(
        "mode-changed",
        null,
        `replication is now ${next === "sync" ? "synchronous (remote_apply)" : "asynchronous"}`,
      );
    },
    async stop() {
      await endpoint.stop();
      await stopAll();
    },
  };
}
