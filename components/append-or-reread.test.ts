import { QueryClient, QueryObserver } from "@tanstack/react-query";
import { describe, expect, it } from "vitest";
import { appendOrReread } from "./append-or-reread";

/**
 * A list on a "server" whose reads wait until released (then answer at once): a read's answer is the list as it
 * was when read.
 */
type Row = { id: string };
const row = (id: string): Row => ({ id });
const rowList = { rows: (list: Row[]) => list, adding: (list: Row[], added: Row) => [...list, added] };

function heldList() {
  const list = [row("a")];
  let held: (() => void)[] | null = [];
  const read = () => {
    const answer = [...list];
    return new Promise<Row[]>((resolve) => (held ? held.push(() => resolve(answer)) : resolve(answer)));
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
    queryClient.setQueryData(queryKey, [row("a")]);
    // Watched, as the page watches it: an invalidated list is read again at once.
    const stop = new QueryObserver(queryClient, { queryKey, queryFn: server.read, staleTime: Infinity }).subscribe(
      () => {},
    );
    // A read again (after a resync, or an answered switch) begins before the item is committed.
    void queryClient.invalidateQueries({ queryKey });
    await expect.poll(() => queryClient.isFetching({ queryKey })).toBe(1);
    server.list.push(row("b"));
    appendOrReread(queryClient, queryKey, row("b"), rowList);
    server.release();
    await expect.poll(() => queryClient.isFetching({ queryKey })).toBe(0);
    expect(queryClient.getQueryData(queryKey)).toEqual([row("a"), row("b")]);
    stop();
  });

  it("is added at once when no read is in flight", () => {
    const queryClient = new QueryClient();
    queryClient.setQueryData(["list"], [row("a")]);
    appendOrReread(queryClient, ["list"], row("b"), rowList);
    expect(queryClient.getQueryData(["list"])).toEqual([row("a"), row("b")]);
  });

  it("is shown once when a read brought it before its message did (a provider call's crosses a relay)", () => {
    const queryClient = new QueryClient();
    queryClient.setQueryData(["list"], [row("a"), row("b")]);
    appendOrReread(queryClient, ["list"], row("b"), rowList);
    expect(queryClient.getQueryData(["list"])).toEqual([row("a"), row("b")]);
  });
});
