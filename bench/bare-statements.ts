/**
 * The least a switch with the lease's guarantees sends to PostgreSQL, as raw pg named statements: what `bare`
 * (bare-server.ts) sends around its two provider calls, and bench/switch-in-process.ts without them.
 * 1. acquire with intent, one CTE: the identity is the user's, the lease taken (free or expired), and the
 *    journal's intent written before any provider call, in one durable commit;
 * 2. after the unlink, the journal's `unlinked`, owner-checked: what recovery needs to know between the calls;
 * 3. after the link, `linked` + save + `done` + release in one fenced statement: the save only while the lease
 *    is this holder's and unexpired, and the journal closed only if it saved.
 * And the least a switch without any lock sends (`none`, beside the lease on the floors, floor-waves.ts): a read
 * of the primary, checking the identity is the user's, and one save after the two calls.
 */
import type pg from "pg";

const ttlSeconds = 10;
/** As the product records it: a call may land up to the provider's apply limit (10 s) past the lease's expiry. */
const inFlightSeconds = 10;

const acquireWithIntent = `
  WITH acquired AS (
    UPDATE users
       SET identity_action_locked_at = now(), identity_action_locked_until = now() + make_interval(secs => $3),
           identity_action_lock_token = gen_random_uuid(), identity_action_fence = identity_action_fence + 1
     WHERE id = $1 AND (identity_action_locked_until IS NULL OR identity_action_locked_until < now())
       AND EXISTS (SELECT 1 FROM identities WHERE user_id = $1 AND id = $2)
    RETURNING primary_identity_id, identity_action_lock_token::text AS token, identity_action_fence AS fence,
              identity_action_locked_until AS until
  ), intent AS (
    INSERT INTO switch_journal (user_id, operation_id, fence, from_identity_id, to_identity_id, step, in_flight_until)
    SELECT $1, $4::uuid, fence, primary_identity_id, $2, 'acquired', until + make_interval(secs => $5) FROM acquired
    RETURNING id::text
  )
  SELECT acquired.primary_identity_id, acquired.token, acquired.fence::text, intent.id AS entry FROM acquired, intent`;

const held = `EXISTS (SELECT 1 FROM users WHERE id = $2 AND identity_action_lock_token = $3::uuid
                                           AND identity_action_locked_until > now())`;
const unlinked = `UPDATE switch_journal SET step = 'unlinked', updated_at = now()
                   WHERE id = $1 AND step <> 'resolved' AND ${held}`;
const saveAndRelease = `
  WITH saved AS (
    UPDATE users
       SET primary_identity_id = $4, version = version + 1,
           identity_action_locked_at = NULL, identity_action_locked_until = NULL, identity_action_lock_token = NULL
     WHERE id = $2 AND identity_action_lock_token = $3::uuid AND identity_action_locked_until > now()
    RETURNING id
  )
  UPDATE switch_journal SET step = 'done', updated_at = now(), in_flight_until = NULL
   WHERE id = $1 AND step <> 'resolved' AND EXISTS (SELECT 1 FROM saved)`;
const release = `UPDATE users SET identity_action_locked_at = NULL, identity_action_locked_until = NULL,
                                  identity_action_lock_token = NULL
                  WHERE id = $1 AND identity_action_lock_token = $2::uuid`;

const readPrimary = `SELECT primary_identity_id FROM users
                      WHERE id = $1 AND EXISTS (SELECT 1 FROM identities WHERE user_id = $1 AND id = $2)`;
const plainSave = `UPDATE users SET primary_identity_id = $2, version = version + 1 WHERE id = $1`;

/** The lease's holder, as the acquiring statement answers it. */
export interface Holder {
  primary_identity_id: string;
  token: string;
  fence: string;
  /** The journal entry's id. */
  entry: string;
}

/** Takes `userId`'s lease and writes the intent; null while another holds it (or the identity is not the user's). */
export async function acquireWithIntentOn(
  pool: pg.Pool,
  userId: string,
  identityId: string,
  operationId: string,
): Promise<Holder | null> {
  const values = [userId, identityId, ttlSeconds, operationId, inFlightSeconds];
  const { rows } = await pool.query<Holder>({ name: "bare_acquire", text: acquireWithIntent, values });
  return rows[0] ?? null;
}

/** The journal's `unlinked`, only while the lease is the holder's. */
export async function markUnlinkedOn(pool: pg.Pool, userId: string, holder: Holder): Promise<void> {
  await pool.query({ name: "bare_unlinked", text: unlinked, values: [holder.entry, userId, holder.token] });
}

/** The fenced save, `done` and the release; false when the lease was lost before it. */
export async function saveAndReleaseOn(
  pool: pg.Pool,
  userId: string,
  holder: Holder,
  identityId: string,
): Promise<boolean> {
  const values = [holder.entry, userId, holder.token, identityId];
  return (await pool.query({ name: "bare_save", text: saveAndRelease, values })).rowCount === 1;
}

/** The release after a failure, owner-checked. */
export async function releaseOn(pool: pg.Pool, userId: string, holder: Holder): Promise<void> {
  await pool.query({ name: "bare_release", text: release, values: [userId, holder.token] });
}

/** Without a lock: the user's primary, or null when the identity is not the user's. */
export async function readPrimaryOn(pool: pg.Pool, userId: string, identityId: string): Promise<string | null> {
  const values = [userId, identityId];
  const { rows } = await pool.query<{ primary_identity_id: string }>({ name: "bare_read", text: readPrimary, values });
  return rows[0]?.primary_identity_id ?? null;
}

/** Without a lock: the save, whoever else is switching the user. */
export async function plainSaveOn(pool: pg.Pool, userId: string, identityId: string): Promise<void> {
  await pool.query({ name: "bare_plain_save", text: plainSave, values: [userId, identityId] });
}
