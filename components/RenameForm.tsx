"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import { api, type UserView } from "./api";
import { queryKeys } from "./queries";

/**
 * Rename: the other writer of the user row. It takes no lease; with "Lock column mapped" on, its save
 * wipes a lease taken while it ran.
 */
export function RenameForm({ user }: { user: UserView }) {
  const queryClient = useQueryClient();
  const inputId = useId();
  const [displayName, setDisplayName] = useState(user.displayName);
  const rename = useMutation({
    mutationFn: () =>
      api<UserView>(`/api/users/${user.id}`, { method: "PATCH", body: JSON.stringify({ displayName }) }),
    // The users and the user's view read again (a prefix), not set from the answer: a switch answered meanwhile
    // may be newer than the view the rename answered with.
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.users }),
  });

  return (
    <form
      className="rename row"
      aria-label="Rename"
      onSubmit={(event) => {
        event.preventDefault();
        rename.mutate();
      }}
    >
      <label htmlFor={inputId}>Display name</label>
      <input
        id={inputId}
        value={displayName}
        maxLength={80}
        required
        onChange={(event) => setDisplayName(event.target.value)}
      />
      <button type="submit" className="quiet" disabled={rename.isPending}>
        {rename.isPending ? "Renaming…" : "Rename"}
      </button>
      {rename.error && <p role="alert">{rename.error.message}</p>}
    </form>
  );
}
