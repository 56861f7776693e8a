import { LearnView } from "@/components/learn/LearnView";

export const metadata = { title: "Learn · Lease Lock Lab" };

export default function LearnPage() {
  return <LearnView />;
}
