import type { QueryClient, QueryKey } from "@tanstack/react-query";

/**
 * Sets a streamed value the page also reads whole (the audit, the settings, the pool). A read of it still on its
 * way may have been made before the message, and would overwrite it when it lands: that read is dropped.
 */
export const replaceRead = (queryClient: QueryClient, queryKey: QueryKey, value: unknown): Promise<void> =>
  queryClient.cancelQueries({ queryKey, exact: true }).then(() => void queryClient.setQueryData(queryKey, value));
