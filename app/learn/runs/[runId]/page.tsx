import { RunPage } from "@/components/learn/RunPage";

export const metadata = { title: "Saved run · Lease Lock Lab" };

export default async function SavedRunPage({ params, searchParams }: PageProps<"/learn/runs/[runId]">) {
  const { predicted } = await searchParams;
  return <RunPage runId={(await params).runId} predicted={typeof predicted === "string" ? predicted : null} />;
}
