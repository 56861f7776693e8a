import { expect, inject, it } from "vitest";
import { startApp } from "./harness/app-server";
import { appClient } from "./harness/http-client";

it("with LAB_ENABLED=false, the lab's endpoints answer 404 and the switch and the rename still work with default settings", async () => {
  const app = await startApp({
    databaseUrl: inject("databaseUrl"),
    port: Number(process.env.NO_LAB_APP_PORT ?? 3215),
    env: { LAB_ENABLED: "false" },
  });
  try {
    const client = appClient(app.baseUrl);
    for (const path of ["/api/lab", "/api/lab/audit", "/api/lab/provider", "/api/lab/pool", "/api/lab/events"]) {
      const answer = await client.get(path);
      expect(answer.status).toBe(404);
      expect(answer.body.type).toMatch(/\/lab-disabled$/);
    }
    expect((await client.post("/api/lab/reset")).status).toBe(404);

    const alan = await client.signedIn("alan");
    const answer = await alan.promote("alan", "apple|000912.alan");
    expect(answer.status).toBe(200);
    expect(answer.body.primaryIdentityId).toBe("apple|000912.alan");

    const renamed = await alan.call("PATCH", "/api/users/alan", { displayName: "Alan T." });
    expect(renamed.status).toBe(200);
    expect(renamed.body.displayName).toBe("Alan T.");
    expect(renamed.body.primaryIdentityId).toBe("apple|000912.alan");
  } finally {
    await app.stop();
  }
});
