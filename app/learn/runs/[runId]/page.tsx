import { RunPage } from "@/components/learn/RunPage";

export const metadata = { title: "Saved run · Lease Lock Lab" };

export default async function SavedRunPage({ params }: PageProps<"/learn/runs/[runId]">) {
  return <RunPage runId={(await params).runId} />;
}
