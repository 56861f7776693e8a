import { CourseView } from "@/components/course/CourseView";

export const metadata = { title: "The course · Lease Lock Lab" };

export default async function CoursePage({ searchParams }: PageProps<"/learn/course">) {
  const { lesson } = await searchParams;
  return <CourseView lessonId={typeof lesson === "string" ? lesson : null} />;
}
