import type { QueryClient, QueryKey } from "@tanstack/react-query";

/** How a list the page reads whole holds its rows (a user's events, the provider's calls). */
export interface RowList<T, Row extends { id: string }> {
  rows: (list: T) => Row[];
  /** The list with `row` added where it belongs (and trimmed to the length the page keeps). */
  adding: (list: T, row: Row) => T;
}

/**
 * Adds a streamed row to a list the page also reads whole. While that list is being read, the read in flight may
 * predate the row and would overwrite it when it lands: the list is read again instead (the read in flight
 * cancelled), and a read begun now sees the row, committed before it was told. A read that landed with the row
 * before its message came (a provider call's message crosses a relay) already shows it: the message adds nothing.
 */
export function appendOrReread<T, Row extends { id: string }>(
  queryClient: QueryClient,
  queryKey: QueryKey,
  row: Row,
  { rows, adding }: RowList<T, Row>,
): void {
  if (queryClient.isFetching({ queryKey, exact: true }) > 0) {
    void queryClient.invalidateQueries({ queryKey, exact: true });
    return;
  }
  queryClient.setQueryData<T>(queryKey, (list) =>
    !list || rows(list).some((each) => each.id === row.id) ? list : adding(list, row),
  );
}
