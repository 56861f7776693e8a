import type { NextRequest } from "next/server";
import { appDb } from "@/lib/core/db";
import { parseJsonBody, respond } from "@/lib/web/http";
import { changeLabSettingsOutsideRuns, requireLab } from "@/lib/lab/settings";
import { labSettingsPatchSchema } from "@/lib/lab/settings-schema";
import { settingsRevisionHeader } from "@/lib/lab/peer-settings";
import { labSettingsAsHeard } from "@/lib/lab/settings-snapshot";

export async function GET(request: Request): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    const { settings, revision } = await labSettingsAsHeard(appDb());
    return Response.json(
      settings,
      revision === null ? {} : { headers: { [settingsRevisionHeader]: String(revision) } },
    );
  });
}

export async function PUT(request: NextRequest): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    const patch = await parseJsonBody(request, labSettingsPatchSchema);
    return Response.json(await changeLabSettingsOutsideRuns(appDb(), patch));
  });
}
