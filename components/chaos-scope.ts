import type { LabSettings, ProviderEndpoint } from "./api";

/** What the provider's chaos fields apply to: every endpoint, or one endpoint's overrides. */
export type Scope = "all" | ProviderEndpoint;
export type ChaosField = keyof LabSettings["provider"]["endpoints"]["link"];
type ProviderSettings = LabSettings["provider"];

/** The provider's settings as seen from one scope: the values shown, the ones inherited, and the patch. */
export interface Scoped {
  scope: Scope;
  provider: ProviderSettings;
  /** An endpoint's own override (null when it inherits), or the value for every endpoint. */
  valueOf: (field: ChaosField) => ProviderSettings[ChaosField] | null;
  /** The value for every endpoint, which an endpoint inherits. */
  inherited: (field: ChaosField) => ProviderSettings[ChaosField];
  /** An endpoint's field may be cleared back to inheriting; the field for every endpoint may not. */
  nullable: boolean;
  /** The `PUT /api/lab` patch that sets the field in this scope. */
  patchOf: (field: ChaosField, value: unknown) => unknown;
}

export function scoped(provider: ProviderSettings, scope: Scope): Scoped {
  const overrides = scope === "all" ? null : provider.endpoints[scope];
  return {
    scope,
    provider,
    valueOf: (field) => (overrides ? overrides[field] : provider[field]),
    inherited: (field) => provider[field],
    nullable: overrides !== null,
    patchOf: (field, value) => ({
      provider: scope === "all" ? { [field]: value } : { endpoints: { [scope]: { [field]: value } } },
    }),
  };
}
