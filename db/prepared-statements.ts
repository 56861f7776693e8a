/**
 * Named prepared statements for the lease's statements, under Kysely. Kysely's PostgreSQL driver sends
 * every query unnamed, so PostgreSQL parses, analyses and plans it each time; for the acquiring CTE that
 * is most of its cost (bench, same run: acquire + release 1.26 ms unnamed, 0.75 ms named, two bare
 * single-row UPDATEs 0.71 ms). A pool wrapped here sends each statement that begins with the comment
 * `/* prepared: NAME *\/` (what `leaseLock(…, { preparedName })` writes) as a named statement, so each
 * connection parses and plans it once; every other query passes through untouched. The name is NAME plus
 * a digest of the text, since one statement of the lease has a few shapes (with an intent or without, …).
 * Without the wrapper the same statements still work, unnamed.
 *
 * Behind a pooler in transaction mode the app's pool goes without it (`DATABASE_POOLER=transaction`,
 * set by `--pgbouncer`): a named statement lives on one server connection, and the pooler hands the next
 * transaction another one, where the name is unknown (26000) or already taken by another client's
 * (42P05). PgBouncer keeps protocol-level prepared statements across its connections only from 1.21
 * (`max_prepared_statements`); Debian 12 ships 1.18. A setting, not a detection: nothing on the wire
 * tells a client that it talks to a pooler.
 */
import { createHash } from "node:crypto";
import { sql, type PostgresPool, type PostgresPoolClient, type RawBuilder } from "kysely";

/** The first characters of a statement to prepare: a comment, so the text runs the same unwrapped. */
const preparedMarker = /^\/\* prepared: ([a-z0-9_]+) \*\//;

/**
 * The marker for one of the app's own statements, to begin its text: `sql\`${preparedAs("journal_advance")} UPDATE …\``.
 * An UPDATE, INSERT or DELETE built with Kysely and embedded after it is compiled as it is (Kysely puts no
 * parentheses around one inside raw SQL; it does around a SELECT).
 */
export function preparedAs(name: string): RawBuilder<unknown> {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`preparedAs: "${name}" is no statement name`);
  return sql.raw(`/* prepared: ${name} */`);
}

interface NamedQueryClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<unknown>;
}

/** A pool whose clients send marked statements as named prepared statements (for `PostgresDialect`). */
export function preparingPool(pool: PostgresPool): PostgresPool {
  // One name per distinct text; the texts are the lease's few statement shapes, so this stays small.
  const names = new Map<string, string | null>();
  const nameOf = (text: string): string | null => {
    let name = names.get(text);
    if (name === undefined) {
      const marked = preparedMarker.exec(text)?.[1];
      name = marked ? `${marked}_${createHash("sha1").update(text).digest("hex").slice(0, 12)}` : null;
      names.set(text, name);
    }
    return name;
  };
  // The same wrapper for the same client: Kysely keeps one connection object per client it is given.
  const wrappers = new WeakMap<PostgresPoolClient, PostgresPoolClient>();
  const wrap = (client: PostgresPoolClient): PostgresPoolClient => {
    let wrapper = wrappers.get(client);
    if (!wrapper) {
      const query = ((text: unknown, values?: readonly unknown[]) => {
        const name = typeof text === "string" && text.startsWith("/* prepared: ") ? nameOf(text) : null;
        return name
          ? (client as unknown as NamedQueryClient).query({ name, text: text as string, values: [...(values ?? [])] })
          : (client.query as (...args: unknown[]) => unknown).call(client, text, values);
      }) as PostgresPoolClient["query"];
      wrapper = { query, release: (destroy?: boolean) => client.release(destroy) };
      wrappers.set(client, wrapper);
    }
    return wrapper;
  };
  return {
    connect: async () => wrap(await pool.connect()),
    end: () => pool.end(),
  };
}
