"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api } from "./api";
import { queryKeys, usersQuery } from "./queries";

export function SignIn() {
  const queryClient = useQueryClient();
  const users = useQuery(usersQuery());
  const signIn = useMutation({
    mutationFn: (userId: string) => api<void>("/api/session", { method: "POST", body: JSON.stringify({ userId }) }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.session }),
  });

  return (
    <>
      <h2 id="identities-heading">Sign in as a demo user</h2>
      <p>Each demo user has several identities linked at the (simulated) identity provider.</p>
      <ul className="plain">
        {users.data?.users.map((user) => (
          <li key={user.id}>
            <button type="button" onClick={() => signIn.mutate(user.id)} disabled={signIn.isPending}>
              Sign in as {user.displayName}
            </button>
          </li>
        ))}
      </ul>
      {signIn.error && <p role="alert">{signIn.error.message}</p>}
    </>
  );
}
