import { sql, type Kysely } from "kysely";

/**
 * The epoch-qualified fence. The user row remembers the generation its lease was taken in (the primary's
 * timeline, `primaryGeneration` in lib/lease); the provider remembers, for each account, the greatest
 * (generation, fence) it has seen and who brought it, and compares a call's pair with it in that order: any
 * holder on a promoted primary outranks every holder on the primary before it, whatever their counters say.
 * It still refuses an equal pair from another holder. `by_generation` false is a provider that keeps the
 * counter alone (the lab's `provider.fenceGenerations: false`): it compares the fences as before.
 */
/** The incoming pair outranks the stored one, as the provider compares them. */
const newer = sql.raw(
  "(excluded.generation, excluded.fence) > (CASE WHEN by_generation THEN f.generation ELSE 0 END, f.fence)",
);

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE users ADD COLUMN identity_action_generation bigint NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE idp.fences ADD COLUMN generation bigint NOT NULL DEFAULT 0`.execute(db);
  // The live stream's lease message names the generation too.
  await sql`
    CREATE OR REPLACE FUNCTION lab_lease_json(u users) RETURNS jsonb LANGUAGE sql STABLE AS $$
      SELECT jsonb_build_object(
        'userId', u.id, 'held', u.identity_action_locked_at IS NOT NULL,
        'lockedAt', lab_iso(u.identity_action_locked_at), 'expiresAt', lab_iso(u.identity_action_locked_until),
        'fence', u.identity_action_fence::text, 'generation', u.identity_action_generation::text,
        'token', left(u.identity_action_lock_token::text, 8),
        'operationId', (SELECT j.operation_id FROM switch_journal j
                         WHERE j.user_id = u.id AND j.fence = u.identity_action_fence
                         ORDER BY j.id DESC LIMIT 1))
    $$`.execute(db);
  await sql`DROP FUNCTION idp.link_account, idp.unlink_identity, idp.get_account, idp.check_fence`.execute(db);

  await sql`
    CREATE FUNCTION idp.check_fence(accounts text[], token bigint, token_generation bigint, token_holder text,
                                    enforce boolean, by_generation boolean) RETURNS void
    LANGUAGE plpgsql AS $$
    DECLARE
      seen record;
      mine bigint := CASE WHEN by_generation THEN coalesce(token_generation, 0) ELSE 0 END;
      shown text := CASE WHEN by_generation THEN format('%s (generation %s)', token, mine) ELSE token::text END;
    BEGIN
      IF token IS NULL THEN RETURN; END IF;
      SELECT account_user_id, fence, CASE WHEN by_generation THEN generation ELSE 0 END AS generation, holder
        INTO seen FROM idp.fences
       WHERE account_user_id = ANY (accounts)
         AND ((CASE WHEN by_generation THEN generation ELSE 0 END, fence) > (mine, token)
              OR ((CASE WHEN by_generation THEN generation ELSE 0 END, fence) = (mine, token)
                  AND holder IS DISTINCT FROM token_holder AND holder IS NOT NULL AND token_holder IS NOT NULL))
       ORDER BY account_user_id LIMIT 1 FOR UPDATE;
      IF FOUND AND enforce THEN
        IF (seen.generation, seen.fence) > (mine, token) THEN
          PERFORM idp.refuse(409, 'Conflict', format('Fencing token %s is older than token %s, already used on %s',
                             shown, CASE WHEN by_generation THEN format('%s (generation %s)', seen.fence, seen.generation)
                                         ELSE seen.fence::text END, seen.account_user_id), 'fenced_token');
        END IF;
        PERFORM idp.refuse(409, 'Conflict', format('Fencing token %s was already used on %s by another holder',
                           shown, seen.account_user_id), 'fenced_token');
      END IF;
      -- In one order, like the accounts' locks: two calls naming the same two accounts never deadlock.
      INSERT INTO idp.fences AS f (account_user_id, fence, generation, holder)
        SELECT account, token, mine, token_holder FROM unnest(accounts) AS account ORDER BY account
        ON CONFLICT (account_user_id) DO UPDATE
          SET fence = CASE WHEN ${newer} THEN excluded.fence ELSE f.fence END,
              generation = CASE WHEN ${newer} THEN excluded.generation ELSE f.generation END,
              holder = CASE WHEN ${newer} THEN excluded.holder ELSE f.holder END;
    END $$`.execute(db);

  await sql`
    CREATE FUNCTION idp.get_account(account text, token bigint, token_generation bigint, token_holder text,
                                    by_generation boolean) RETURNS jsonb
    LANGUAGE plpgsql AS $$
    BEGIN
      -- A read with a token registers it (a fenced read): older writes are refused from then on.
      IF token IS NOT NULL THEN
        PERFORM idp.check_fence(ARRAY[account], token, token_generation, token_holder, false, by_generation);
      END IF;
      PERFORM idp.require_account(account);
      RETURN jsonb_build_object('user_id', account, 'identities', idp.identities_of(account));
    END $$`.execute(db);

  await sql`
    CREATE FUNCTION idp.unlink_identity(main text, id_provider text, id_user text, token bigint, token_generation bigint,
                                        token_holder text, enforce boolean, by_generation boolean)
      RETURNS jsonb
    LANGUAGE plpgsql AS $$
    DECLARE secondary text := id_provider || '|' || id_user;
    BEGIN
      IF secondary = main THEN
        PERFORM idp.refuse(400, 'Bad Request', 'Main identity cannot be removed', 'operation_not_supported');
      END IF;
      PERFORM 1 FROM idp.accounts WHERE user_id = main FOR UPDATE;
      PERFORM idp.check_fence(ARRAY[main, secondary], token, token_generation, token_holder, enforce, by_generation);
      PERFORM idp.require_account(main);
      IF NOT idp.is_linked_under(main, id_provider, id_user) THEN
        PERFORM idp.refuse(404, 'Not Found', 'Identity not found', 'inexistent_identity');
      END IF;
      INSERT INTO idp.accounts (user_id) VALUES (secondary);
      UPDATE idp.identities SET account_user_id = secondary WHERE provider = id_provider AND user_id = id_user;
      RETURN idp.identities_of(main);
    END $$`.execute(db);

  await sql`
    CREATE FUNCTION idp.link_account(main text, id_provider text, id_user text, token bigint, token_generation bigint,
                                     token_holder text, enforce boolean, by_generation boolean)
      RETURNS jsonb
    LANGUAGE plpgsql AS $$
    DECLARE secondary text := id_provider || '|' || id_user;
    BEGIN
      IF secondary = main THEN
        PERFORM idp.refuse(400, 'Bad Request', 'Main identity and the new one are the same.', 'invalid_body');
      END IF;
      -- Both accounts locked in one order, so that two concurrent links never deadlock.
      PERFORM 1 FROM idp.accounts WHERE user_id IN (main, secondary) ORDER BY user_id FOR UPDATE;
      PERFORM idp.check_fence(ARRAY[main, secondary], token, token_generation, token_holder, enforce, by_generation);
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
  await sql`ALTER TABLE idp.fences DROP COLUMN generation`.execute(db);
  await sql`ALTER TABLE users DROP COLUMN identity_action_generation`.execute(db);
}
