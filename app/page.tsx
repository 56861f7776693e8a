import { LabApp } from "@/components/LabApp";

export default function HomePage() {
  return <LabApp />;
}
