/** Answers counted by HTTP status, e.g. `{ 200: 310, 409: 280, 503: 12 }` (0: no answer). */
export const countByStatus = (answers: readonly { status: number }[]): Record<string, number> =>
  answers.reduce<Record<string, number>>(
    (counts, { status }) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }),
    {},
  );
