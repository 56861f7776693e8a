import { beforeEach, inject } from "vitest";
import { appClient, type AppClient } from "./harness/http-client";

/**
 * Every test of the calling file starts from the seed (plus `settings`), with `users` signed in: their
 * clients are in `session`, filled anew before each test.
 */
export function freshLabEachTest<User extends string = "ada">(
  settings?: Record<string, unknown>,
  users: User[] = ["ada" as User],
): { app: AppClient; session: Record<User, AppClient> } {
  const app = appClient(inject("appUrl"));
  const session = {} as Record<User, AppClient>;
  beforeEach(async () => {
    await app.reset();
    if (settings) await app.configure(settings);
    const clients = await Promise.all(users.map((userId) => app.signedIn(userId)));
    users.forEach((userId, index) => (session[userId] = clients[index]!));
  });
  return { app, session };
}
