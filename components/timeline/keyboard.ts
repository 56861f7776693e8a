/** The chart's keyboard: which item is focused, and what each key does (moves are geometry's `move`). */
import { isMoveKey, move, type Item, type ItemRow } from "./geometry";

export interface Focused {
  row: number;
  item: number;
  value: Item;
}

export function findItem(rows: ItemRow[], key: string | null): Focused | null {
  if (key === null) return null;
  for (const [row, each] of rows.entries()) {
    const item = each.items.findIndex((candidate) => candidate.key === key);
    if (item >= 0) return { row, item, value: each.items[item]! };
  }
  return null;
}

/**
 * Arrow keys, Home and End move the focus between bars; Enter or Space picks the focused bar's operation;
 * Escape drops the pick.
 */
export function chartKeys(
  rows: ItemRow[],
  focused: Focused | null,
  actions: { focus: (key: string | null) => void; pick: (operationId: string) => void; unpick: (() => void) | null },
) {
  return (event: React.KeyboardEvent) => {
    if (isMoveKey(event.key)) {
      event.preventDefault();
      const cursor = move(rows, focused && { row: focused.row, item: focused.item }, event.key);
      actions.focus(cursor ? rows[cursor.row]!.items[cursor.item]!.key : null);
    } else if ((event.key === "Enter" || event.key === " ") && focused) {
      event.preventDefault();
      actions.pick(focused.value.lane.operationId);
    } else if (event.key === "Escape") actions.unpick?.();
  };
}
