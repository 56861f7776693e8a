/**
 * Statements built once and sent many times. Kysely builds a query's tree and compiles it to SQL at every call,
 * yet a lease's statements differ from call to call only in their values. So each is built and compiled once
 * per database and shape (the objects its SQL is made of: the lock, the caller's recorders and conditions),
 * with `param(name)` where a call's value goes, and each call sends that same text with its own values. For
 * the product's switch that building and compiling was 0.25–0.37 ms of CPU out of 2.8–4.4 (bench:profile,
 * 64 switches at once), and the same text each time is what a named prepared statement needs.
 */
import {
  createQueryId,
  ValueNode,
  type CompiledQuery,
  type Compilable,
  type Expression,
  type Kysely,
  type OperationNode,
  type QueryResult,
  type RawBuilder,
} from "kysely";

/**
 * A value given at each call, by name: the statement is compiled once with it in place (as `$n`), and each
 * call's `values[name]` is sent there. Usable wherever Kysely takes an expression or a value: in `sql`
 * templates, `set`, `where`.
 */
export class Param<T = unknown> implements Expression<T> {
  constructor(readonly name: string) {}

  get expressionType(): T | undefined {
    return undefined;
  }

  toOperationNode(): OperationNode {
    return ValueNode.create(this);
  }
}

export const param = <T = unknown>(name: string): Param<T> => new Param<T>(name);

/** The values of a statement's parameters, by name. */
export type ParamValues = Readonly<Record<string, unknown>>;

type Buildable<R> = Compilable<R> | RawBuilder<R>;

const compile = <DB, R>(db: Kysely<DB>, query: Buildable<R>): CompiledQuery<R> =>
  "isRawBuilder" in query ? query.compile(db) : query.compile();

/** `template` with each parameter's value from `values`; a parameter without one is a mistake, said at once. */
export function bound<R>(template: CompiledQuery<R>, values: ParamValues): CompiledQuery<R> {
  const parameters = template.parameters.map((each) => {
    if (!(each instanceof Param)) return each;
    if (!Object.hasOwn(values, each.name)) throw new Error(`no value for the statement's parameter "${each.name}"`);
    return values[each.name];
  });
  return { sql: template.sql, query: template.query, parameters, queryId: createQueryId() };
}

/**
 * One statement's values from several parts (a requirement's, a recorder's): a name two parts give must have
 * the same value in both, else one part's condition would be checked against the other's value, and that is a
 * mistake said at once.
 */
export function mergedValues(...parts: (ParamValues | undefined)[]): ParamValues {
  const merged: Record<string, unknown> = {};
  for (const [name, value] of parts.flatMap((part) => Object.entries(part ?? {}))) {
    if (Object.hasOwn(merged, name) && !Object.is(merged[name], value))
      throw new Error(`the statement's parameter "${name}" was given two different values`);
    merged[name] = value;
  }
  return merged;
}

interface Branch<T> {
  next: WeakMap<object, Branch<T>>;
  leaf?: T;
}

/** What was made from a list of objects, kept while they live: the same objects give the same thing. */
export class MadeOnce<T> {
  private readonly root: Branch<T> = { next: new WeakMap() };

  get(keys: readonly object[], make: () => T): T {
    let branch = this.root;
    for (const key of keys) {
      let next = branch.next.get(key);
      if (!next) {
        next = { next: new WeakMap() };
        branch.next.set(key, next);
      }
      branch = next;
    }
    if (branch.leaf === undefined) branch.leaf = make();
    return branch.leaf;
  }
}

/** Stands for an absent part of a shape (a recorder not given) among `MadeOnce`'s keys. */
export const none: object = Object.freeze({});

/** Statements compiled once per database and shape: `run` compiles on first use, then only binds. */
export class CompiledStatements {
  private readonly templates = new MadeOnce<CompiledQuery<unknown>>();

  run<DB, R>(
    db: Kysely<DB>,
    shape: readonly object[],
    build: () => Buildable<R>,
    values: ParamValues,
  ): Promise<QueryResult<R>> {
    const template = this.templates.get([db, ...shape], () => compile(db, build())) as CompiledQuery<R>;
    return db.executeQuery(bound(template, values));
  }
}

/** A statement of a fixed shape, with its parameters: compiled the first time it runs on a database. */
export interface Statement<DB, R, V extends ParamValues> {
  execute(db: Kysely<DB>, values: V): Promise<QueryResult<R>>;
}

/**
 * One statement, written once (`build` gets the database only to start Kysely's builders), e.g.
 * `statement((db) => sql\`UPDATE jobs SET status = ${param("status")} WHERE id = ${param("id")}\`)`.
 */
export function statement<DB, R, V extends ParamValues>(build: (db: Kysely<DB>) => Buildable<R>): Statement<DB, R, V> {
  const compiled = new CompiledStatements();
  return { execute: (db, values) => compiled.run(db, [], () => build(db), values) };
}

/** A query with parameters, compiled now and sent once: for statements too rare to keep (a refusal's reason). */
export const executeOnce = <DB, R>(db: Kysely<DB>, query: Buildable<R>, values: ParamValues): Promise<QueryResult<R>> =>
  db.executeQuery(bound(compile(db, query), values));
