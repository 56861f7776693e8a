"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { identityId, seedUsers } from "@/db/seed-data";
import { api, type BurstReport, type Strategy } from "./api";
import { queryKeys } from "./queries";
import { useResetLab } from "./useLab";

/** The two buttons of the start card: the same two switches at once, first with no lock, then under the lease. */
export type DemoKind = "corruption" | "fix";

export const demoStrategy = { corruption: "none", fix: "lease" } as const satisfies Record<DemoKind, Strategy>;

/** Who the demo runs for when nobody is signed in. */
export const demoDefaultUser = "ada";

export interface DemoTarget {
  identityId: string;
  label: string;
}

export interface DemoRun {
  kind: DemoKind;
  userId: string;
  displayName: string;
  targets: DemoTarget[];
  report: BurstReport;
  /** When the burst's answer arrived (this browser's clock): audits from the stream after it are newer. */
  answeredAt: number;
}

/**
 * The demo's user as the seed has it (each run starts from a reset), and its two targets: two identities
 * other than the primary. Null for a user with fewer than three identities.
 */
export function demoSubject(userId: string): { displayName: string; targets: DemoTarget[] } | null {
  const user = seedUsers.find((each) => each.id === userId);
  const others = user?.identities.slice(1, 3) ?? [];
  if (!user || others.length < 2) return null;
  return {
    displayName: user.displayName,
    targets: others.map((identity) => ({ identityId: identityId(identity), label: identity.label })),
  };
}

const send = <T = void>(method: "POST" | "PUT", path: string, body: unknown) =>
  api<T>(path, { method, body: JSON.stringify(body) });

/**
 * Runs one demo through the lab's HTTP surface: signs in as the demo user if nobody is, resets the lab,
 * sets the strategy (`none` for the corruption, `lease` for the fix), then sends the two switches at once
 * (`POST /api/lab/burst` with `identityIds`).
 */
export function useDemo(signedInAs: string | null, onStart: () => void) {
  const queryClient = useQueryClient();
  const reset = useResetLab();
  return useMutation({
    onMutate: onStart,
    mutationFn: async (kind: DemoKind): Promise<DemoRun> => {
      const userId = signedInAs ?? demoDefaultUser;
      const subject = demoSubject(userId);
      if (!subject)
        throw new Error(`${userId} has fewer than three identities: the demo needs two besides the primary.`);
      if (!signedInAs) {
        await send("POST", "/api/session", { userId });
        void queryClient.invalidateQueries({ queryKey: queryKeys.session });
      }
      await reset.mutateAsync();
      await send("PUT", "/api/lab", { strategy: demoStrategy[kind] });
      const identityIds = subject.targets.map((target) => target.identityId);
      const report = await send<BurstReport>("POST", "/api/lab/burst", { userId, count: 2, identityIds });
      const answeredAt = Date.now();
      // A read of the audit sent before the switches (the reset's) must not land after this as the news.
      void queryClient.invalidateQueries({ queryKey: queryKeys.audit });
      return { kind, userId, ...subject, report, answeredAt };
    },
  });
}
