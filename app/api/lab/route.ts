import type { NextRequest } from "next/server";
import { appDb } from "@/lib/db";
import { parseJsonBody, respond } from "@/lib/http";
import { changeLabSettings, requireLab } from "@/lib/lab";
import { getLabSettings, labSettingsPatchSchema } from "@/lib/lab-settings";

export async function GET(): Promise<Response> {
  return respond(async () => {
    requireLab();
    return Response.json(await getLabSettings(appDb()));
  });
}

export async function PUT(request: NextRequest): Promise<Response> {
  return respond(async () => {
    requireLab();
    const patch = await parseJsonBody(request, labSettingsPatchSchema);
    return Response.json(await changeLabSettings(appDb(), patch));
  });
}
