/** Who is asking: an authenticated account (or the anonymous MQTT identity) and its roles. */
export interface Principal {
  /** Lower-case account name; `$anonymous` for allowed anonymous MQTT clients, `$system` inside. */
  account: string;
  roles: readonly string[];
}

export const SYSTEM_PRINCIPAL: Principal = Object.freeze({ account: '$system', roles: Object.freeze(['admin']) });
