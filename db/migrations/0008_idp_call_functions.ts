import { sql, type Kysely } from "kysely";

/**
 * The simulated provider's three calls (read an account, unlink, link) as functions: each call is one
 * round trip instead of about ten (BEGIN, locks, fence, checks, writes, the answer, COMMIT). The
 * simulator runs inside the app's process, so its statements cost the app's event loop: under load they
 * were most of the database work of a switch. Each statement inside a function still reads the newest
 * committed rows (READ COMMITTED takes a snapshot per statement), so a call behaves as the transaction it
 * replaces; a refusal raises SQLSTATE IDP01 with the provider's error as JSON in DETAIL, which rolls the
 * call back (a fence registered by a refused call is not kept).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION idp.refuse(status int, error text, message text, error_code text) RETURNS void
    LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION USING ERRCODE = 'IDP01', MESSAGE = message,
        DETAIL = jsonb_build_object('statusCode', status, 'error', error, 'message', message, 'errorCode', error_code)::text;
    END $$`.execute(db);

  // An account's identities as the Management API lists them: its own identity first, then by linking order.
  await sql`
    CREATE FUNCTION idp.identities_of(account text) RETURNS jsonb
    LANGUAGE sql STABLE AS $$
      SELECT coalesce(jsonb_agg(jsonb_build_object('provider', provider, 'user_id', user_id, 'isSocial', provider <> 'auth0')
                                ORDER BY (provider || '|' || user_id) = account_user_id DESC, linked_seq), '[]')
        FROM idp.identities WHERE account_user_id = account
    $$`.execute(db);

  // Remembers the highest token seen per account. Kleppmann's check, when enforcing: a lower one is refused.
  await sql`
    CREATE FUNCTION idp.check_fence(accounts text[], token bigint, enforce boolean) RETURNS void
    LANGUAGE plpgsql AS $$
    DECLARE newer record;
    BEGIN
      IF token IS NULL THEN RETURN; END IF;
      SELECT account_user_id, fence INTO newer FROM idp.fences
       WHERE account_user_id = ANY (accounts) AND fence > token ORDER BY account_user_id LIMIT 1 FOR UPDATE;
      IF FOUND AND enforce THEN
        PERFORM idp.refuse(409, 'Conflict', format('Fencing token %s is older than token %s, already used on %s',
                           token, newer.fence, newer.account_user_id), 'fenced_token');
      END IF;
      -- In one order, like the accounts' locks: two calls naming the same two accounts never deadlock.
      INSERT INTO idp.fences (account_user_id, fence) SELECT account, token FROM unnest(accounts) AS account ORDER BY account
        ON CONFLICT (account_user_id) DO UPDATE SET fence = greatest(idp.fences.fence, excluded.fence);
    END $$`.execute(db);

  await sql`
    CREATE FUNCTION idp.require_account(account text) RETURNS void
    LANGUAGE plpgsql AS $$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM idp.accounts WHERE user_id = account) THEN
        PERFORM idp.refuse(404, 'Not Found', 'The user does not exist.', 'inexistent_user');
      END IF;
    END $$`.execute(db);

  await sql`
    CREATE FUNCTION idp.is_linked_under(account text, id_provider text, id_user text) RETURNS boolean
    LANGUAGE sql STABLE AS $$
      SELECT EXISTS (SELECT 1 FROM idp.identities
                      WHERE provider = id_provider AND user_id = id_user AND account_user_id = account)
    $$`.execute(db);

  await sql`
    CREATE FUNCTION idp.get_account(account text, token bigint) RETURNS jsonb
    LANGUAGE plpgsql AS $$
    BEGIN
      -- A read with a token registers it (a fenced read): older writes are refused from then on.
      IF token IS NOT NULL THEN PERFORM idp.check_fence(ARRAY[account], token, false); END IF;
      PERFORM idp.require_account(account);
      RETURN jsonb_build_object('user_id', account, 'identities', idp.identities_of(account));
    END $$`.execute(db);

  // DELETE /users/{primary}/identities/{provider}/{user_id}: the identity becomes an account of its own.
  await sql`
    CREATE FUNCTION idp.unlink_identity(main text, id_provider text, id_user text, token bigint, enforce boolean)
      RETURNS jsonb
    LANGUAGE plpgsql AS $$
    DECLARE secondary text := id_provider || '|' || id_user;
    BEGIN
      IF secondary = main THEN
        PERFORM idp.refuse(400, 'Bad Request', 'Main identity cannot be removed', 'operation_not_supported');
      END IF;
      PERFORM 1 FROM idp.accounts WHERE user_id = main FOR UPDATE;
      PERFORM idp.check_fence(ARRAY[main, secondary], token, enforce);
      PERFORM idp.require_account(main);
      IF NOT idp.is_linked_under(main, id_provider, id_user) THEN
        PERFORM idp.refuse(404, 'Not Found', 'Identity not found', 'inexistent_identity');
      END IF;
      INSERT INTO idp.accounts (user_id) VALUES (secondary);
      UPDATE idp.identities SET account_user_id = secondary WHERE provider = id_provider AND user_id = id_user;
      RETURN idp.identities_of(main);
    END $$`.execute(db);

  // POST /users/{primary}/identities: the secondary account and all linked under it move under primary.
  await sql`
    CREATE FUNCTION idp.link_account(main text, id_provider text, id_user text, token bigint, enforce boolean)
      RETURNS jsonb
    LANGUAGE plpgsql AS $$
    DECLARE secondary text := id_provider || '|' || id_user;
    BEGIN
      IF secondary = main THEN
        PERFORM idp.refuse(400, 'Bad Request', 'Main identity and the new one are the same.', 'invalid_body');
      END IF;
      -- Both accounts locked in one order, so that two concurrent links never deadlock.
      PERFORM 1 FROM idp.accounts WHERE user_id IN (main, secondary) ORDER BY user_id FOR UPDATE;
      PERFORM idp.check_fence(ARRAY[main, secondary], token, enforce);
      PERFORM idp.require_account(main);
      IF idp.is_linked_under(main, id_provider, id_user) THEN
        PERFORM idp.refuse(409, 'Conflict', 'Specified identity already exists', 'identity_conflict');
      END IF;
      IF NOT EXISTS (SELECT 1 FROM idp.accounts WHERE user_id = secondary) THEN
        PERFORM idp.refuse(400, 'Bad Request', 'Provided secondary account not found', 'invalid_body');
      END IF;
      UPDATE idp.identities SET account_user_id = main WHERE account_user_id = secondary;
      DELETE FROM idp.accounts WHERE user_id = secondary;
      RETURN idp.identities_of(main);
    END $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP FUNCTION idp.link_account, idp.unlink_identity, idp.get_account, idp.is_linked_under, idp.require_account,
                  idp.check_fence, idp.identities_of, idp.refuse`.execute(db);
}
