import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE users (
      id text PRIMARY KEY,
      display_name text NOT NULL,
      primary_identity_id text NOT NULL,
      identity_action_locked_at timestamptz NULL,
      identity_action_lock_token uuid NULL,
      identity_action_fence bigint NOT NULL DEFAULT 0
    )`.execute(db);
  await sql`
    CREATE TABLE identities (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      provider text NOT NULL,
      provider_user_id text NOT NULL,
      label text NOT NULL,
      position integer NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX identities_user_id ON identities (user_id)`.execute(db);
  await sql`
    CREATE TABLE lab_settings (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      settings jsonb NOT NULL
    )`.execute(db);
  // The session-signing key, made once per database by its own strong random source.
  await sql`
    CREATE TABLE app_secret (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      session_key text NOT NULL
    )`.execute(db);
  await sql`INSERT INTO app_secret (session_key) VALUES (gen_random_uuid()::text || gen_random_uuid()::text)`.execute(
    db,
  );

  await sql`CREATE SCHEMA idp`.execute(db);
  await sql`CREATE TABLE idp.accounts (user_id text PRIMARY KEY)`.execute(db);
  await sql`
    CREATE TABLE idp.identities (
      provider text NOT NULL,
      user_id text NOT NULL,
      account_user_id text NOT NULL REFERENCES idp.accounts (user_id),
      linked_seq bigserial NOT NULL,
      PRIMARY KEY (provider, user_id)
    )`.execute(db);
  await sql`CREATE INDEX idp_identities_account ON idp.identities (account_user_id)`.execute(db);
  await sql`
    CREATE TABLE idp.calls (
      id bigserial PRIMARY KEY,
      at timestamptz NOT NULL DEFAULT clock_timestamp(),
      method text NOT NULL,
      path text NOT NULL,
      status integer NOT NULL,
      operation_id text NULL,
      duration_ms integer NOT NULL
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP SCHEMA idp CASCADE`.execute(db);
  await sql`DROP TABLE app_secret, lab_settings, identities, users`.execute(db);
}
