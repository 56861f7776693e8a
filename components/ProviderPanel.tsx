"use client";

import { useQuery } from "@tanstack/react-query";
import { ProviderAccounts } from "./ProviderAccounts";
import { ProviderCalls } from "./ProviderCalls";
import { providerQuery } from "./queries";

/** The provider's accounts (with whose they are) and its call log in the order the calls ended. */
export function ProviderPanel({ selected }: { selected: string | null }) {
  const state = useQuery(providerQuery());
  if (!state.data)
    return <section className="card">{state.error ? state.error.message : "Loading the provider…"}</section>;
  return (
    <section className="card provider" aria-labelledby="provider-heading">
      <h2 id="provider-heading">The identity provider (simulated)</h2>
      <div className="provider-columns">
        <ProviderAccounts accounts={state.data.accounts} />
        <ProviderCalls calls={state.data.calls} selected={selected} />
      </div>
    </section>
  );
}
