/**
 * Users switching their primary identity over and over, as on the page: `clients` signed-in clients (the demo
 * users in turn, so two clients of one user race each other), each sending its next switch as soon as the last
 * one answered, until told to stop. Every answer is kept with its time, for what a failover did to them.
 */
import { seedUsers, identityId } from "../../db/seed-data";
import { appClient } from "./http-client";

export interface LoadAnswer {
  /** ms since the load started. */
  at: number;
  userId: string;
  /** 0: no HTTP answer at all (the connection failed). */
  status: number;
  problemType: string | null;
  retryAfter: string | null;
  contentType: string | null;
}

export interface SwitchLoad {
  answers: LoadAnswer[];
  /** Ends the load once every client's request in flight has answered. */
  stop(): Promise<void>;
}

export async function switchLoad(baseUrl: string, clients: number): Promise<SwitchLoad> {
  const started = performance.now();
  const answers: LoadAnswer[] = [];
  let stopping = false;
  const users = Array.from({ length: clients }, (_, index) => seedUsers[index % seedUsers.length]!);
  const signedIn = await Promise.all(users.map((user) => appClient(baseUrl).signedIn(user.id)));
  const loops = users.map(async (user, index) => {
    const targets = user.identities.map(identityId);
    for (let turn = index; !stopping; turn++) {
      const identity = targets[turn % targets.length]!;
      const answer = await signedIn[index]!.promote(user.id, identity).catch(() => null);
      answers.push({
        at: Math.round(performance.now() - started),
        userId: user.id,
        status: answer?.status ?? 0,
        problemType: answer?.body?.type ?? null,
        retryAfter: answer?.headers.get("retry-after") ?? null,
        contentType: answer?.headers.get("content-type") ?? null,
      });
    }
  });
  return {
    answers,
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}
