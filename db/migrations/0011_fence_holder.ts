import { sql, type Kysely } from "kysely";

/**
 * The provider remembers who brought each account's highest fence (the holder: the operation id its calls
 * carry), and refuses an equal fence that comes from another holder. Once an asynchronous replica is promoted
 * after acquisitions it never received, the database issues a fence again: two holders carry the same number,
 * and a check that only refuses lower fences would let both write. Calls without a holder are checked by
 * number only, as before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE idp.fences ADD COLUMN holder text`.execute(db);
  await sql`DROP FUNCTION idp.link_account, idp.unlink_identity, idp.get_account, idp.check_fence`.execute(db);

  await sql`
    CREATE FUNCTION idp.check_fence(accounts text[], token bigint, token_holder text, enforce boolean) RETURNS void
    LANGUAGE plpgsql AS $$
    DECLARE seen record;
    BEGIN
      IF token IS NULL THEN RETURN; END IF;
      SELECT account_user_id, fence, holder INTO seen FROM idp.fences
       WHERE account_user_id = ANY (accounts)
         AND (fence > token OR (fence = token AND holder IS DISTINCT FROM token_holder
                                AND holder IS NOT NULL AND token_holder IS NOT NULL))
       ORDER BY account_user_id LIMIT 1 FOR UPDATE;
      IF FOUND AND enforce THEN
        IF seen.fence > token THEN
          PERFORM idp.refuse(409, 'Conflict', format('Fencing token %s is older than token %s, already used on %s',
                             token, seen.fence, seen.account_user_id), 'fenced_token');
        END IF;
        PERFORM idp.refuse(409, 'Conflict', format('Fencing token %s was already used on %s by another holder',
                           token, seen.account_user_id), 'fenced_token');
      END IF;
      -- In one order, like the accounts' locks: two calls naming the same two accounts never deadlock.
      INSERT INTO idp.fences (account_user_id, fence, holder)
        SELECT account, token, token_holder FROM unnest(accounts) AS account ORDER BY account
        ON CONFLICT (account_user_id) DO UPDATE
          SET holder = CASE WHEN excluded.fence > idp.fences.fence THEN excluded.holder ELSE idp.fences.holder END,
              fence = greatest(idp.fences.fence, excluded.fence);
    END $$`.execute(db);

  await sql`
    CREATE FUNCTION idp.get_account(account text, token bigint, token_holder text) RETURNS jsonb
    LANGUAGE plpgsql AS $$
    BEGIN
      -- A read with a token registers it (a fenced read): older writes are refused from then on.
      IF token IS NOT NULL THEN PERFORM idp.check_fence(ARRAY[account], token, token_holder, false); END IF;
      PERFORM idp.require_account(account);
      RETURN jsonb_build_object('user_id', account, 'identities', idp.identities_of(account));
    END $$`.execute(db);

  await sql`
    CREATE FUNCTION idp.unlink_identity(main text, id_provider text, id_user text, token bigint, token_holder text,
                                        enforce boolean)
      RETURNS jsonb
    LANGUAGE plpgsql AS $$
    DECLARE secondary text := id_provider || '|' || id_user;
    BEGIN
      IF secondary = main THEN
        PERFORM idp.refuse(400, 'Bad Request', 'Main identity cannot be removed', 'operation_not_supported');
      END IF;
      PERFORM 1 FROM idp.accounts WHERE user_id = main FOR UPDATE;
      PERFORM idp.check_fence(ARRAY[main, secondary], token, token_holder, enforce);
      PERFORM idp.require_account(main);
      IF NOT idp.is_linked_under(main, id_provider, id_user) THEN
        PERFORM idp.refuse(404, 'Not Found', 'Identity not found', 'inexistent_identity');
      END IF;
      INSERT INTO idp.accounts (user_id) VALUES (secondary);
      UPDATE idp.identities SET account_user_id = secondary WHERE provider = id_provider AND user_id = id_user;
      RETURN idp.identities_of(main);
    END $$`.execute(db);

  await sql`
    CREATE FUNCTION idp.link_account(main text, id_provider text, id_user text, token bigint, token_holder text,
                                     enforce boolean)
      RETURNS jsonb
    LANGUAGE plpgsql AS $$
    DECLARE secondary text := id_provider || '|' || id_user;
    BEGIN
      IF secondary = main THEN
        PERFORM idp.refuse(400, 'Bad Request', 'Main identity and the new one are the same.', 'invalid_body');
      END IF;
      -- Both accounts locked in one order, so that two concurrent links never deadlock.
      PERFORM 1 FROM idp.accounts WHERE user_id IN (main, secondary) ORDER BY user_id FOR UPDATE;
      PERFORM idp.check_fence(ARRAY[main, secondary], token, token_holder, enforce);
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
  await sql`DROP FUNCTION idp.link_account, idp.unlink_identity, idp.get_account, idp.check_fence`.execute(db);
  await sql`ALTER TABLE idp.fences DROP COLUMN holder`.execute(db);
}
