/** Card text as written in the experiments: `code` in backticks shown as code, never as raw backticks. */
export function RichText({ text }: { text: string }) {
  return text
    .split(/(`[^`]+`)/)
    .map((part, index) =>
      part.startsWith("`") && part.endsWith("`") && part.length > 2 ? (
        <code key={index}>{part.slice(1, -1)}</code>
      ) : (
        part
      ),
    );
}
