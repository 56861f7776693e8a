import { notFound } from "next/navigation";
import { RunPage } from "@/components/learn/RunPage";
import { config } from "@/lib/core/config";
import { appDb } from "@/lib/core/db";
import { runIsSaved } from "@/lib/lab/experiments/runs";

export const metadata = { title: "Saved run · Lease Lock Lab" };

export default async function SavedRunPage({ params, searchParams }: PageProps<"/learn/runs/[runId]">) {
  const [{ runId }, { predicted }] = await Promise.all([params, searchParams]);
  // A run that is not saved is a 404 page, as the API's answer is (and every run, with the lab off). A database
  // that cannot be read now leaves it to the page's own read, which says so.
  if (!config.labEnabled || !(await runIsSaved(appDb(), runId).catch(() => true))) notFound();
  return <RunPage runId={runId} predicted={typeof predicted === "string" ? predicted : null} />;
}
