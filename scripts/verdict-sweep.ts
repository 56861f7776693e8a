/**
 * `npm run sweep [-- --runs 30 --labs 2 --shapes plain,pgbouncer,redis,balance --resume]`: every experiment
 * available in a start shape, run `runs` times as the Learn view's Run button runs it, on `labs` labs side by
 * side (a loaded machine, as a class's is), in each shape in turn (scripts/sweep/shapes.ts). Each lab is a
 * fresh database on the embedded server with its own simulated provider and the shape's parts. An experiment
 * whose parts the shape does not run is listed `available: false` and not run. Writes each shape's results to
 * bench/results/verdict-sweep-<shape>.json after every run (`--resume` goes on from it); prints each shape's
 * verdicts and run times and every unexpected run's explanation and runId. Exits non-zero if any verdict was
 * unexpected.
 */
import { parseArgs } from "node:util";
import { prepareDatabase } from "../db/prepare";
import { median } from "../bench/stats";
import { databaseFor } from "../test/harness/databases";
import {
  currentCommit,
  resultsFile,
  resultsToResume,
  runsLeft,
  writeResults,
  type ShapeResults,
} from "./sweep/results";
import { shapes, startShapeLab, startSharedParts, type Shape, type ShapeLab } from "./sweep/shapes";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "30" },
    labs: { type: "string", default: "2" },
    shapes: { type: "string", default: shapes.join(",") },
    resume: { type: "boolean", default: false },
  },
});
const runs = Number(values.runs);
const labs = Number(values.labs);
const asked = values.shapes.split(",").map((shape) => shape.trim());
const unknown = asked.filter((shape) => !(shapes as readonly string[]).includes(shape));
if (!(runs >= 1) || !(labs >= 1) || unknown.length > 0)
  throw new Error(`usage: --runs N (≥ 1) --labs N (≥ 1) --shapes ${shapes.join(",")}; unknown: ${unknown.join(", ")}`);
// Outside the test suites' port pool (test/harness/ports.ts), so a sweep can run beside them.
const portBase = Number(process.env.SWEEP_PORT_BASE ?? 3320);
const pgbouncerPort = Number(process.env.SWEEP_PGBOUNCER_PORT ?? 6443);
const commit = currentCommit();

interface Listed {
  id: string;
  available: boolean;
  needs: string[];
}

/** The shape's tallies, the file's kept when resuming, each experiment's availability as the shape's app says. */
function tallyUp(results: ShapeResults, listed: Listed[]): void {
  results.experiments = listed.map(({ id, available, needs }) => {
    const known = results.experiments.find((tally) => tally.experimentId === id);
    return known
      ? { ...known, available, needs }
      : { experimentId: id, available, needs, asExpected: 0, unexpected: [], seconds: [] };
  });
}

/** Sends the queued runs, each lab one at a time, all labs at once; the results are written after each run. */
async function runQueue(results: ShapeResults, started: ShapeLab[], queue: string[], begun: number) {
  const total = queue.length;
  let done = 0;
  await Promise.all(
    started.map(async ({ client }) => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        const at = performance.now();
        const answer = await client.post(`/api/lab/experiments/${id}/run`);
        const tally = results.experiments.find((each) => each.experimentId === id)!;
        tally.seconds.push(Math.round(performance.now() - at) / 1000);
        if (answer.status === 200 && answer.body.verdict === "as-expected") tally.asExpected++;
        else
          tally.unexpected.push({
            runId: answer.body?.runId ?? `HTTP ${answer.status}`,
            explanation: answer.body?.explanation ?? answer.body?.detail ?? JSON.stringify(answer.body),
          });
        done++;
        writeResults(results);
        process.stdout.write(
          `\r${results.shape}: ${done} of ${total} runs, ${Math.round((Date.now() - begun) / 1000)} s`,
        );
      }
    }),
  );
}

async function sweepShape(shape: Shape): Promise<ShapeResults> {
  const results = resultsToResume(shape, commit, runs, labs, values.resume);
  const databaseUrls = await Promise.all(
    Array.from({ length: labs }, (_, index) =>
      prepareDatabase(databaseFor(`sweep_${shape}_${index}`), { fresh: true }),
    ),
  );
  const shared = await startSharedParts(shape, databaseUrls[0]!, pgbouncerPort);
  const started: ShapeLab[] = [];
  const begun = Date.now();
  try {
    for (const [index, url] of databaseUrls.entries())
      started.push(await startShapeLab(shape, index, url, portBase, shared));
    tallyUp(results, (await started[0]!.client.get("/api/lab/experiments")).body.experiments as Listed[]);
    writeResults(results);
    // Every available experiment's remaining runs, round by round, shared out among the labs.
    const queue = Array.from({ length: runs }, (_, round) =>
      results.experiments.filter((tally) => runsLeft(tally, runs) > round).map((tally) => tally.experimentId),
    ).flat();
    await runQueue(results, started, queue, begun);
  } finally {
    for (const lab of started) await lab.stop().catch((error: unknown) => console.error(`[sweep] ${String(error)}`));
    await shared.stop();
  }
  results.wallSeconds += Math.round((Date.now() - begun) / 1000);
  writeResults(results);
  return results;
}

function report(results: ShapeResults): void {
  console.log(
    `\n\n${results.shape} (${results.startedWith}), at ${results.commit}: ${results.runsEach} runs of each available ` +
      `experiment, ${results.labsAtATime} at a time, ${results.wallSeconds} s; ${resultsFile(results.shape)}`,
  );
  console.table(
    results.experiments.map((tally) => ({
      experiment: tally.experimentId,
      available: tally.available ? "yes" : `no (needs ${tally.needs.join(", ")})`,
      "as expected": tally.asExpected,
      unexpected: tally.unexpected.length,
      "median s": tally.seconds.length > 0 ? median(tally.seconds) : null,
      "slowest s": tally.seconds.length > 0 ? Math.max(...tally.seconds) : null,
    })),
  );
  for (const tally of results.experiments)
    for (const { runId, explanation } of tally.unexpected)
      console.log(`UNEXPECTED ${results.shape} ${tally.experimentId} (${runId}): ${explanation}`);
}

const swept: ShapeResults[] = [];
for (const shape of asked as Shape[]) swept.push(await sweepShape(shape));
swept.forEach(report);
const unexpected = swept.flatMap((results) => results.experiments).reduce((sum, t) => sum + t.unexpected.length, 0);
console.log(`\n${unexpected} unexpected verdicts in ${swept.map((results) => results.shape).join(", ")}`);
process.exitCode = unexpected === 0 && swept.every((results) => results.complete) ? 0 : 1;
