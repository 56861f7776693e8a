import { QueryClient, QueryObserver } from "@tanstack/react-query";
import { describe, expect, it } from "vitest";
import { appendOrReread } from "./append-or-reread";

/**
 * A list on a "server" whose reads wait until released (then answer at once): a read's answer is the list as it
 * was when read.
 */
function heldList() {
  const list = ["a"];
  let held: (() => void)[] | null = [];
  const read = () => {
    const answer = [...list];
    return new Promise<string[]>((resolve) => (held ? held.push(() => resolve(answer)) : resolve(answer)));
  };
  const release = () => {
    const waiting = held ?? [];
    held = null;
    waiting.forEach((answer) => answer());
  };
  return { list, read, release };
}

describe("a streamed item added to a list the page reads whole", () => {
  it("is kept when a read that predates it is in flight: the list is read again", async () => {
    const server = heldList();
    const queryClient = new QueryClient();
    const queryKey = ["list"];
    queryClient.setQueryData(queryKey, ["a"]);
    // Watched, as the page watches it: an invalidated list is read again at once.
    const stop = new QueryObserver(queryClient, { queryKey, queryFn: server.read, staleTime: Infinity }).subscribe(
      () => {},
    );
    // A read again (after a resync, or an answered switch) begins before the item is committed.
    void queryClient.invalidateQueries({ queryKey });
    await expect.poll(() => queryClient.isFetching({ queryKey })).toBe(1);
    server.list.push("b");
    appendOrReread<string[]>(queryClient, queryKey, (list) => [...list, "b"]);
    server.release();
    await expect.poll(() => queryClient.isFetching({ queryKey })).toBe(0);
    expect(queryClient.getQueryData(queryKey)).toEqual(["a", "b"]);
    stop();
  });

  it("is added at once when no read is in flight", () => {
    const queryClient = new QueryClient();
    queryClient.setQueryData(["list"], ["a"]);
    appendOrReread<string[]>(queryClient, ["list"], (list) => [...list, "b"]);
    expect(queryClient.getQueryData(["list"])).toEqual(["a", "b"]);
  });
});
