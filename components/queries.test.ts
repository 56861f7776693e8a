import { QueryClient, type QueryFunction } from "@tanstack/react-query";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Lane, Timeline } from "./api";
import { queryKeys, timelineQuery } from "./queries";
import { testLane } from "./test-lane";

/** The server's timeline, as the next read of it answers. */
const serving = (operations: Lane[]) =>
  vi.stubGlobal("fetch", async () => Response.json({ now: "2026-12-07T12:00:02.000Z", operations }));

/** A page that read ada's and grace's views and the provider's calls: none of them stale yet. */
function pageWithReads() {
  const queryClient = new QueryClient();
  for (const queryKey of [queryKeys.user("ada"), queryKeys.user("grace"), queryKeys.provider])
    queryClient.setQueryData(queryKey, {});
  const stale = () =>
    [queryKeys.user("ada"), queryKeys.user("grace"), queryKeys.provider].filter(
      (queryKey) => queryClient.getQueryState(queryKey)?.isInvalidated,
    );
  return { queryClient, stale };
}

afterEach(() => vi.unstubAllGlobals());

describe("a read of the timeline and the answers it brings", () => {
  it("has the views of users whose answer it brings first read again, and the provider's calls", async () => {
    const { queryClient, stale } = pageWithReads();
    // Another instance's switch for ada ran while the page held it running; its answer's message is still to come.
    serving([testLane("a", false, "ada"), testLane("b", true, "grace")]);
    await queryClient.fetchQuery(timelineQuery());
    expect(stale()).toEqual([]);
    serving([testLane("a", true, "ada"), testLane("b", true, "grace")]);
    await queryClient.fetchQuery({ ...timelineQuery(), staleTime: 0 });
    expect(stale()).toEqual([queryKeys.user("ada"), queryKeys.provider]);
  });

  it("judges nothing from a read cancelled for a later one", async () => {
    const { queryClient, stale } = pageWithReads();
    serving([testLane("a", false, "ada")]);
    await queryClient.fetchQuery(timelineQuery());
    // The server answers ada's switch answered, as a fetch does: once asked, unless aborted first.
    let answer = () => {};
    vi.stubGlobal(
      "fetch",
      (_url: string, { signal }: RequestInit) =>
        new Promise<Response>((resolve, reject) => {
          signal?.addEventListener("abort", () => reject(signal.reason));
          answer = () =>
            resolve(Response.json({ now: "2026-12-07T12:00:02.000Z", operations: [testLane("a", true, "ada")] }));
        }),
    );
    const cancelled = new AbortController();
    const { queryKey, queryFn } = timelineQuery();
    const read = (queryFn as QueryFunction<Timeline, typeof queryKey>)({
      client: queryClient,
      queryKey,
      signal: cancelled.signal,
      meta: undefined,
    });
    cancelled.abort();
    answer();
    await expect(read).rejects.toThrow();
    expect(stale()).toEqual([]);
  });

  it("leaves the first read to the page's own first reads beside it", async () => {
    const { queryClient, stale } = pageWithReads();
    serving([testLane("a", true, "ada")]);
    await queryClient.fetchQuery(timelineQuery());
    expect(stale()).toEqual([]);
  });
});
