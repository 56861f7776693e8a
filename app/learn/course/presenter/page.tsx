import { PresenterView } from "@/components/course/PresenterView";

export const metadata = { title: "Presenter view · The course · Lease Lock Lab" };

export default async function PresenterPage({ searchParams }: PageProps<"/learn/course/presenter">) {
  const { lesson } = await searchParams;
  return <PresenterView lessonId={typeof lesson === "string" ? lesson : null} />;
}
