import { HandoutView } from "@/components/course/HandoutView";

export const metadata = { title: "The handout · The course · Lease Lock Lab" };

export default function HandoutPage() {
  return <HandoutView />;
}
