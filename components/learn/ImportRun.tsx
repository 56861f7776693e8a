"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { api, ApiError } from "../api";
import type { RunRecord } from "./types";

/** Imports a run exported before (a teacher's prepared run) and opens it at its new address. */
export function ImportRun() {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function importFile(file: File) {
    setError(null);
    setBusy(true);
    try {
      const run = await api<RunRecord>("/api/lab/runs", { method: "POST", body: await file.text() });
      router.push(`/learn/runs/${run.id}`);
    } catch (failure) {
      setError(
        failure instanceof ApiError
          ? `${failure.problem.title}: ${
              Array.isArray(failure.problem.errors)
                ? (failure.problem.errors as { field: string; message: string }[])
                    .slice(0, 3)
                    .map((each) => `${each.field} ${each.message}`)
                    .join("; ")
                : failure.problem.detail
            }`
          : String(failure),
      );
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className="import-run">
      <label>
        Import a saved run (JSON){" "}
        <input
          type="file"
          accept="application/json,.json"
          disabled={busy}
          onChange={(event) => {
            const file = event.target.files?.[0];
            if (file) void importFile(file);
          }}
        />
      </label>
      {error && <p role="alert">The file was not imported. {error}</p>}
    </div>
  );
}
