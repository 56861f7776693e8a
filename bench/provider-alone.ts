/**
 * The simulated provider alone, as the wall-time targets' 2L is meant: K clients at once, each making a switch's
 * two calls (unlink, then link) straight from the bench through the product's transport, with no app between.
 * How long the provider itself (a process of the same machine, on the same two cores) takes to answer K
 * switches' calls at once, in the same run as the app's waves: the part of their wall time that is not ours.
 */
import { randomUUID } from "node:crypto";
import { switchCalls } from "./bare-switch";
import type { BenchUser } from "./bench-users";
import { repeated, type Repeated } from "./stats";

export interface ProviderAloneResult {
  /** Clients at once, each making one switch's two calls. */
  users: number;
  latencyMs: number;
  /** Per wave: until every client's second call had answered. */
  wallMs: Repeated;
}

/**
 * `repetitions` waves for each of `userCounts`, on the provider at `providerUrl` set to a fixed latency of
 * `latencyMs`, with `users` as many as the most (their accounts at the provider, the first identity primary).
 */
export async function providerAlone(
  providerUrl: string,
  users: BenchUser[],
  options: { latencyMs: number; userCounts: number[]; repetitions: number },
  progress: (note: string) => void,
): Promise<ProviderAloneResult[]> {
  const calls = switchCalls(providerUrl);
  const primary = users.map((user) => user.identities[0]);
  const switchAt = async (index: number) => {
    const user = users[index]!;
    const [from, to] = [
      primary[index]!,
      primary[index] === user.identities[0] ? user.identities[1] : user.identities[0],
    ];
    const headers = { "X-Operation-Id": randomUUID() };
    await calls.unlink(from, to, headers);
    await calls.link(from, to, headers);
    primary[index] = to;
  };
  const wave = async (count: number) => {
    const started = performance.now();
    await Promise.all(Array.from({ length: count }, (_, index) => switchAt(index)));
    return performance.now() - started;
  };
  // The provider's own first calls (its statements prepared, its work's estimate learnt) are not measured.
  await wave(Math.max(...options.userCounts));
  const results: ProviderAloneResult[] = [];
  for (const count of options.userCounts) {
    progress(`the provider alone: K=${count}, L=${options.latencyMs} ms`);
    const walls: number[] = [];
    for (let repetition = 0; repetition < options.repetitions; repetition++) walls.push(await wave(count));
    results.push({ users: count, latencyMs: options.latencyMs, wallMs: repeated(walls) });
  }
  return results;
}
