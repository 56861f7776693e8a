import type { QueryClient, QueryKey } from "@tanstack/react-query";

/**
 * Sets a value the page also reads whole, from what is newer than any read of it: a streamed message (the audit,
 * the settings, the pool), or the answer that changed it (a sign-out's session). A read of it still on its way may
 * have been made before, and would overwrite it when it lands: that read is dropped.
 */
export const replaceRead = (queryClient: QueryClient, queryKey: QueryKey, value: unknown): Promise<void> =>
  queryClient.cancelQueries({ queryKey, exact: true }).then(() => void queryClient.setQueryData(queryKey, value));
