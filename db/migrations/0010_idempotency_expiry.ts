import { sql, type Kysely } from "kysely";

/**
 * Idempotency records expire after 24 hours, and each claim deletes a few expired ones: this index finds
 * them oldest first without reading the live ones.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX idempotency_records_created_at ON idempotency_records (created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX idempotency_records_created_at`.execute(db);
}
