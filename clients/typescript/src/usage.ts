// A small client of docproc's API, typed by the generated `api.d.ts` (openapi-typescript):
// `tsc --noEmit` fails if a path, a parameter, a body field or an answer's shape here
// no longer matches the schema the server publishes at /openapi.json.
import createClient from "openapi-fetch";
import type { components, paths } from "./api";

type KnowledgeBase = components["schemas"]["KnowledgeBaseOut"];
type ErrorEnvelope = components["schemas"]["ErrorEnvelope"];

export function docproc(baseUrl: string, token: string) {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });
}

/** A field-level message for a form, from the error envelope's details.fields. */
export function fieldMessages(envelope: ErrorEnvelope): Record<string, string> {
  const out: Record<string, string> = {};
  for (const problem of envelope.error.details.fields ?? []) {
    out[problem.field] = problem.message;
  }
  return out;
}

export async function createAndSearch(baseUrl: string, token: string): Promise<string[]> {
  const api = docproc(baseUrl, token);
  const created = await api.POST("/api/v1/kb", {
    body: {
      name: "Handbook",
      collection_name: "handbook",
      scope: "org",
      embedding_provider: "local",
      embedding_model: "sentence-transformers/all-MiniLM-L6-v2",
    },
  });
  if (created.error) {
    throw new Error(JSON.stringify(fieldMessages(created.error)));
  }
  const kb: KnowledgeBase = created.data;
  const status = await api.GET("/api/v1/kb/{kb_id}/ingestion", {
    params: { path: { kb_id: kb.id } },
  });
  const indexing: "indexing" | "complete" | undefined = status.data?.indexing_status;
  const found = await api.POST("/api/v1/rag/search", {
    body: { query: "how do otters sleep?", collections: [kb.collection_name], top_k: 3 },
  });
  if (found.error) {
    throw new Error(`${found.error.error.code}: ${found.error.error.message} (${indexing})`);
  }
  return found.data.results.map((hit) => `${citation(hit)}: ${hit.score}`);
}

type SearchHit = components["schemas"]["SearchHit"];

/** How a hit is cited: its file, its pages (or the headings above it) and its parsed view. */
export function citation(hit: SearchHit): string {
  const pages =
    hit.page_start == null
      ? null
      : hit.crosses_pages
        ? `pp. ${hit.page_start}-${hit.page_end}`
        : `p. ${hit.page_start}`;
  const where = pages ?? (hit.heading_path ?? []).join(" > ");
  const read: string | undefined = hit.links?.parsed;
  return `${hit.filename ?? "?"}#${hit.chunk_no} ${where} ${read ?? ""}`.trim();
}

type ChatFile = components["schemas"]["ChatFileOut"];

/** A chat card's label, by the specification's eight file types: a ninth fails to compile. */
export function cardLabel(file: ChatFile): string {
  switch (file.file_type) {
    case "image":
      return file.file_kind === "tiff" ? "Image (TIFF, downloaded)" : "Image";
    case "pdf":
      return "PDF";
    case "docx":
      return "Word document";
    case "spreadsheet":
      return "Spreadsheet";
    case "document":
      return file.file_kind === "archive" ? "Archive" : "Document";
    case "presentation":
      return "Presentation";
    case "email":
      return "Email";
    case "text":
      return "Text";
    default: {
      const ninth: never = file.file_type;
      return ninth;
    }
  }
}
