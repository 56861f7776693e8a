/**
 * The provider's random source for one call. A seeded run takes the next draw number from the database, so
 * the sequence is the same on every app instance and after every reset; an unseeded one uses Math.random.
 */
import type { Kysely } from "kysely";
import { randomForDraw, type Random } from "./chaos";
import type { IdpDatabase } from "./schema";

export async function randomSource(db: Kysely<IdpDatabase>, seed: number | null): Promise<Random> {
  if (seed === null) return Math.random;
  const { draws } = await db
    .insertInto("idp.random_state")
    .values({ seed, draws: "1" })
    .onConflict((conflict) =>
      conflict.column("id").doUpdateSet((eb) => ({
        draws: eb
          .case()
          .when("idp.random_state.seed", "=", seed)
          .then(eb("idp.random_state.draws", "+", "1"))
          .else("1")
          .end(),
        seed,
      })),
    )
    .returning("draws")
    .executeTakeFirstOrThrow();
  return randomForDraw(seed, Number(draws));
}

/** A reset starts the seeded sequence again. */
export async function resetDraws(db: Kysely<IdpDatabase>): Promise<void> {
  await db.deleteFrom("idp.random_state").execute();
}
