import { rpc, type ApiOutput } from '../api.ts';
import { useApi } from './use-api.ts';

/**
 * The providers a connection can read, as the service lists them (GET /v1/memory/connections/providers):
 * their labels, whether the service syncs them, whether their OAuth is available here, and the
 * credential and config fields the form asks for, read from each one's JSON Schema. The service
 * checks the fields again (422 naming a missing one).
 */
export interface ConnectionField {
  name: string;
  label: string;
  required: boolean;
  /** Tokens and passwords (`format: password`): typed into a password input, never shown back. */
  secret: boolean;
  /** Integers (the sync interval) are sent as numbers. */
  numeric: boolean;
  min?: number;
  hint?: string;
}

interface JsonSchema {
  properties?: Record<string, { type?: string; title?: string; description?: string; format?: string; minimum?: number }>;
  required?: string[];
}

/** The fields of an object's JSON Schema, in the schema's order. */
export function connectionFields(schema: Record<string, unknown>): ConnectionField[] {
  const { properties = {}, required = [] } = schema as JsonSchema;
  return Object.entries(properties).map(([name, p]) => ({
    name,
    label: p.title ?? name,
    required: required.includes(name),
    secret: p.format === 'password',
    numeric: p.type === 'integer' || p.type === 'number',
    min: p.minimum,
    hint: p.description,
  }));
}

/** A schema that names no fields takes any JSON object (postgres keeps whatever the tenant gives). */
export const takesFreeJson = (schema: Record<string, unknown>) => !(schema as JsonSchema).properties;

// The list is the server's, the same for every key: asked once per page load, again after a failure.
type Providers = ApiOutput['connections']['providers'];
let loading: Promise<Providers> | null = null;
function loadProviders(): Promise<Providers> {
  loading ??= rpc.connections.providers.query().catch((err: unknown) => {
    loading = null;
    throw err;
  });
  return loading;
}

export const useConnectionProviders = () => useApi(loadProviders, []);
