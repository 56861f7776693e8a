import { beforeEach, inject } from "vitest";
import { appClient, type AppClient } from "./http-client";

/** Every test of the calling file starts from the seed (plus `settings`), with Ada signed in. */
export function freshLabEachTest(settings?: Record<string, unknown>): { app: AppClient; session: { ada: AppClient } } {
  const app = appClient(inject("appUrl"));
  const session = { ada: app };
  beforeEach(async () => {
    await app.reset();
    if (settings) await app.configure(settings);
    session.ada = await app.signedIn("ada");
  });
  return { app, session };
}
