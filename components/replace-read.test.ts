import { QueryClient } from "@tanstack/react-query";
import { describe, expect, it } from "vitest";
import { replaceRead } from "./replace-read";

describe("a streamed value the page also reads whole", () => {
  it("is kept when a read made before it lands afterwards, the page's first read or a later one", async () => {
    for (const before of [undefined, "settings 1"]) {
      const queryClient = new QueryClient();
      const queryKey = ["settings"];
      if (before) queryClient.setQueryData(queryKey, before);
      let land = () => {};
      const read = queryClient.fetchQuery({
        queryKey,
        queryFn: () => new Promise<string>((resolve) => (land = () => resolve(before ?? "settings 1"))),
      });
      await replaceRead(queryClient, queryKey, "settings 2");
      land();
      await read.catch(() => {});
      expect(queryClient.getQueryData(queryKey)).toBe("settings 2");
    }
  });

  it("is set at once when no read is on its way", async () => {
    const queryClient = new QueryClient();
    queryClient.setQueryData(["pool"], { active: 1 });
    await replaceRead(queryClient, ["pool"], { active: 2 });
    expect(queryClient.getQueryData(["pool"])).toEqual({ active: 2 });
  });
});
