// The public API (/api/v1) with the caller's bearer token; refusals as ApiError. Its shapes
// are the types generated from the API's OpenAPI document (clients/typescript/src/api.d.ts,
// `make clients`), so an answer the console reads that the API no longer gives fails
// the build.

import type { components } from "docproc-api";

const TOKEN_KEY = "docproc.token";

type Schemas = components["schemas"];

export type FieldProblem = Schemas["FieldProblem"];

/**
 * The error envelope (`{"error": {"code", "message", "details": {"fields": [...]}}}`), or a
 * server that could not be reached (status 0).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields: FieldProblem[] = [],
  ) {
    super(message);
  }
}

export interface Claims {
  sub: string;
  org: string | null;
  permissions: string[];
  app_admin: boolean;
  exp: number;
}

export function token(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value: string | null): void {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** What the token says about its holder (read for display only: the server verifies it). */
export function claims(): Claims | null {
  const t = token();
  if (!t) return null;
  try {
    const payload = t.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(payload)) as Claims;
  } catch {
    return null;
  }
}

/** `fetch`, with a network failure as an ApiError like any refusal. */
async function send(url: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch {
    throw new ApiError(0, "UNREACHABLE", "The server could not be reached");
  }
}

async function fail(response: Response): Promise<never> {
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    // not JSON: fall through to the status line
  }
  const error = (body as Partial<Schemas["ErrorEnvelope"]> | null)?.error;
  if (response.status === 401) {
    setToken(null);
    window.dispatchEvent(new Event("docproc:signed-out"));
  }
  if (error) throw new ApiError(response.status, error.code, error.message, error.details?.fields ?? []);
  throw new ApiError(response.status, "HTTP_ERROR", `${response.status} ${response.statusText}`);
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  const t = token();
  if (t) headers.Authorization = `Bearer ${t}`;
  let payload: BodyInit | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(body);
  }
  const response = await send(`/api/v1${path}`, { method, headers, body: payload });
  if (!response.ok) return fail(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** The console's own settings (`/console/config.json`, docproc_upload.console: not the API's). */
export interface ConsoleConfig {
  dev_sign_in: boolean;
  max_upload_size_mb: number;
  chat_max_upload_size_mb: number;
}

export async function consoleConfig(): Promise<ConsoleConfig> {
  const response = await send("/console/config.json");
  if (!response.ok) return fail(response);
  return (await response.json()) as ConsoleConfig;
}

export async function mintDevToken(userId: string, organizationId: string, appAdmin: boolean): Promise<string> {
  const response = await send("/console/dev-token", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ user_id: userId, organization_id: organizationId || null, app_admin: appAdmin }),
  });
  if (!response.ok) return fail(response);
  return ((await response.json()) as { token: string }).token;
}

// -- the API's shapes the console reads ------------------------------------------------------

export type KnowledgeBase = Schemas["KnowledgeBaseOut"];
export type EmbeddingCatalog = Schemas["EmbeddingCatalogOut"];
export type EmbeddingProvider = Schemas["EmbeddingProviderOut"];
export type DocumentPage = Schemas["DocumentPage"];
export type DocumentRow = Schemas["DocumentOut"];
export type IngestionStatus = Schemas["IngestionStatus"];
export type ReindexOut = Schemas["ReindexOut"];
export type SearchResponse = Schemas["SearchResponse"];
export type SearchHit = Schemas["SearchHit"];
export type Connector = Schemas["ConnectorOut"];
export type Secret = Schemas["SecretOut"];
export type SecretKind = Schemas["SecretKind"];
export type SyncSource = Schemas["SourceOut"];
export type SyncLogPage = Schemas["SyncLogPage"];
export type SyncLog = Schemas["SyncLogOut"];
export type ChatFile = Schemas["ChatFileOut"];
export type Evaluation = Schemas["EvaluationOut"];
export type EvaluationRun = Schemas["EvaluationRunOut"];
export type VisionProfile = Schemas["VisionProfileOut"];
export type VisionProfileCreate = Schemas["VisionProfileCreate"];
