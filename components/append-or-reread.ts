import type { QueryClient, QueryKey } from "@tanstack/react-query";

/**
 * Adds a streamed item to a list the page also reads whole (a user's events, the provider's calls). While that
 * list is being read, the read in flight may predate the item and would overwrite it when it lands: the list is
 * read again instead (the read in flight cancelled), and a read begun now sees the item, committed before it
 * was told.
 */
export function appendOrReread<T>(queryClient: QueryClient, queryKey: QueryKey, append: (list: T) => T): void {
  if (queryClient.isFetching({ queryKey, exact: true }) > 0) {
    void queryClient.invalidateQueries({ queryKey, exact: true });
    return;
  }
  queryClient.setQueryData<T>(queryKey, (list) => (list ? append(list) : list));
}
