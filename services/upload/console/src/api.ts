// The public API (/api/v1) with the caller's bearer token; refusals as ApiError.

const TOKEN_KEY = "docproc.token";

export interface FieldProblem {
  field: string;
  message: string;
}

/** The error envelope: `{"error": {"code", "message", "details": {"fields": [...]}}}`. */
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

async function fail(response: Response): Promise<never> {
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    // not JSON: fall through to the status line
  }
  const error = (body as { error?: { code: string; message: string; details?: { fields?: FieldProblem[] } } })?.error;
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
  const response = await fetch(`/api/v1${path}`, { method, headers, body: payload });
  if (!response.ok) return fail(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

export interface ConsoleConfig {
  dev_sign_in: boolean;
  max_upload_size_mb: number;
  chat_max_upload_size_mb: number;
}

export async function consoleConfig(): Promise<ConsoleConfig> {
  const response = await fetch("/console/config.json");
  if (!response.ok) return fail(response);
  return (await response.json()) as ConsoleConfig;
}

export async function mintDevToken(userId: string, organizationId: string, appAdmin: boolean): Promise<string> {
  const response = await fetch("/console/dev-token", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ user_id: userId, organization_id: organizationId || null, app_admin: appAdmin }),
  });
  if (!response.ok) return fail(response);
  return ((await response.json()) as { token: string }).token;
}

// -- the API's shapes the console reads ------------------------------------------------------

export interface KnowledgeBase {
  id: string;
  name: string;
  collection_name: string;
  scope: string;
  is_default: boolean;
  organization_id: string | null;
  embedding_provider: string;
  embedding_model: string;
  embedding_dim: number;
  ingestion_config: Record<string, unknown>;
  created_at: string;
}

export interface EmbeddingProvider {
  name: string;
  label: string;
  credential: "secret" | "endpoint" | "none";
  models: { model: string; dimensions: number; max_input_tokens: number }[];
}

export interface DocumentRow {
  id: string;
  filename: string;
  filesize: number;
  filetype: string;
  status: string;
  error_message: string | null;
  chunk_count: number;
  source: string;
  organizational_unit: string | null;
  created_at: string;
}

export interface IngestionStatus {
  indexing_status: "indexing" | "complete";
  processing_count: number;
  indexed_count: number;
  failed_count: number;
  document_count: number;
}

export interface SearchHit {
  collection_name: string;
  document_id: string | null;
  chunk_no: number;
  filename: string | null;
  content: string;
  score: number;
  metadata: Record<string, unknown>;
}

export interface Connector {
  name: string;
  title: string;
  description: string;
  config_schema: JsonSchema;
  secret_kind: string | null;
  secret_required: boolean;
}

export interface JsonSchema {
  type?: string;
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
}

export interface Secret {
  id: string;
  name: string;
  kind: string;
  visibility: string;
}

export interface SyncSource {
  id: string;
  name: string | null;
  connector: string;
  config: Record<string, unknown>;
  secret_id: string | null;
  active: boolean;
  last_run_at: string | null;
  audience: string | null;
}

export interface SyncLog {
  id: string;
  status: string;
  mode: string;
  total_files: number;
  ingested: number;
  updated: number;
  skipped: number;
  failed: number;
  deleted: number;
  error_message: string | null;
  started_at: string;
  finished_at: string | null;
}

export interface ChatFile {
  id: string;
  filename: string;
  mime_type: string;
  size: number;
  /** The specification's eight types; `file_kind` is finer (adds tiff, doc, archive). */
  file_type: "image" | "pdf" | "docx" | "spreadsheet" | "document" | "presentation" | "email" | "text";
  file_kind: string;
  preview: string | null;
}

export interface ModeScores {
  ndcg_at_10: number;
  recall_at_10: number;
  recall_at_100: number;
  mrr_at_10: number;
}

export interface EvaluationRun {
  id: string;
  evaluation_id: string;
  trigger: "manual" | "scheduled";
  status: "ok" | "failed";
  error: string | null;
  started_by: string | null;
  started_at: string;
  finished_at: string;
  query_count: number;
  missing_documents: number;
  scores: Partial<Record<"vector" | "keyword" | "hybrid", ModeScores>>;
  skipped: Partial<Record<"vector" | "keyword" | "hybrid", string>>;
  settings: {
    embedding_provider: string;
    embedding_model: string;
    search_default_mode: string;
    text_search_config: string;
    splitter_version: number;
    ingestion_config: Record<string, unknown>;
  };
}

export interface Evaluation {
  id: string;
  knowledge_base_id: string;
  name: string;
  query_count: number;
  judgment_count: number;
  created_by: string;
  created_at: string;
  latest_run: EvaluationRun | null;
}
