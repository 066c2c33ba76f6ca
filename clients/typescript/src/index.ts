// @docproc/client: docproc's HTTP API, typed by `api.d.ts` (generated from the upload
// service's OpenAPI by openapi-typescript, `make clients`) through openapi-fetch, with a
// thin layer: the bearer token set once, answers unwrapped (a refusal throws
// `DocprocError`), the document listing followed page by page, uploads that wait out a
// busy intake, and how a search hit is cited.
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./api.js";

export type { components, operations, paths } from "./api.js";

type Schemas = components["schemas"];
export type KnowledgeBase = Schemas["KnowledgeBaseOut"];
export type KnowledgeBaseCreate = Schemas["KnowledgeBaseCreate"];
export type IngestionStatus = Schemas["IngestionStatus"];
export type DocumentOut = Schemas["DocumentOut"];
export type ParsedPages = Schemas["ParsedPages"];
export type ChunkContext = Schemas["ChunkContext"];
export type SearchRequest = Schemas["SearchRequest"];
export type SearchHit = Schemas["SearchHit"];
export type IngestAnswer = Schemas["RAGIngestResponse"];
export type ErrorEnvelope = Schemas["ErrorEnvelope"];

/** A refused request: the envelope `{"error": {"code", "message", "details"}}`. */
export class DocprocError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown>;
  /** A 503's `Retry-After` (a busy intake), in seconds. */
  readonly retryAfter: number | undefined;

  constructor(status: number, body: unknown, retryAfter?: number) {
    const error = (body as Partial<ErrorEnvelope> | undefined)?.error;
    const code = typeof error?.code === "string" ? error.code : `HTTP_${status}`;
    const message =
      typeof error?.message === "string" ? error.message : String(body ?? "no body").slice(0, 500);
    super(`${status} ${code}: ${message}`);
    this.name = "DocprocError";
    this.status = status;
    this.code = code;
    this.details = (error?.details as Record<string, unknown> | undefined) ?? {};
    this.retryAfter = retryAfter;
  }

  /** The envelope's message, as the API wrote it. */
  get reason(): string {
    return this.message.replace(/^\d+ [A-Z_0-9]+: /, "");
  }

  /** Each form input the server named in `details.fields`, with its message. */
  get fields(): Record<string, string> {
    const out: Record<string, string> = {};
    const problems = (this.details.fields ?? []) as { field: string; message: string }[];
    for (const problem of problems) out[problem.field] = problem.message;
    return out;
  }
}

/** A field-level message for a form, from an error envelope's `details.fields`. */
export function fieldMessages(envelope: ErrorEnvelope): Record<string, string> {
  const out: Record<string, string> = {};
  for (const problem of envelope.error.details.fields ?? []) out[problem.field] = problem.message;
  return out;
}

/** `atlas.pdf, p. 2`, `atlas.pdf, pp. 2-3`, `handbook.md, Leave > Holidays`, else the file
 * and the chunk number (a chunk indexed before citations, until it is indexed again). */
export function cite(hit: SearchHit): string {
  const name = hit.filename ?? hit.document_id ?? hit.vector_document_id;
  if (hit.page_start != null) {
    const end = hit.page_end ?? hit.page_start;
    return end === hit.page_start ? `${name}, p. ${hit.page_start}` : `${name}, pp. ${hit.page_start}-${end}`;
  }
  if (hit.heading_path?.length) return `${name}, ${hit.heading_path.join(" > ")}`;
  return `${name}, chunk ${hit.chunk_no}`;
}

export interface DocprocOptions {
  /** The deployment's root, behind its gateway (`http://127.0.0.1:8000` for `docproc dev`). */
  baseUrl: string;
  /** The bearer token the gateway signs (locally: `docproc token`). */
  token: string;
  fetch?: typeof globalThis.fetch;
}

export interface UploadOptions {
  /** Only the ingestion settings that change for this file, e.g. `{ chunk_size: 500 }`. */
  ingestion?: Record<string, unknown>;
  organizationalUnit?: string;
  /** The document's own date, YYYY-MM-DD. */
  documentDate?: string;
  replace?: boolean;
  /** How long a busy intake's 503 is waited out (its `Retry-After`); 120 s by default. */
  busyTimeoutMs?: number;
}

export interface SearchOptions {
  knowledgeBaseIds?: string[];
  collections?: string[];
  topK?: number;
  mode?: SearchRequest["mode"];
  filters?: SearchRequest["filters"];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Throw the answer's envelope unless it succeeded; else its data. */
function ok<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.response.ok && answer.data !== undefined) return answer.data;
  const retry = Number(answer.response.headers.get("retry-after") ?? Number.NaN);
  throw new DocprocError(answer.response.status, answer.error, Number.isFinite(retry) ? retry : undefined);
}

export class Docproc {
  /** The openapi-fetch client: every operation of the OpenAPI, typed. */
  readonly api: Client<paths>;
  readonly baseUrl: string;

  constructor({ baseUrl, token, fetch }: DocprocOptions) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.api = createClient<paths>({
      baseUrl: this.baseUrl,
      headers: { Authorization: `Bearer ${token}` },
      ...(fetch ? { fetch } : {}),
    });
  }

  /** Every knowledge base the caller can read. */
  async knowledgeBases(): Promise<KnowledgeBase[]> {
    return ok(await this.api.GET("/api/v1/kb"));
  }

  async createKnowledgeBase(body: KnowledgeBaseCreate): Promise<KnowledgeBase> {
    return ok(await this.api.POST("/api/v1/kb", { body }));
  }

  async ingestion(kbId: string): Promise<IngestionStatus> {
    return ok(await this.api.GET("/api/v1/kb/{kb_id}/ingestion", { params: { path: { kb_id: kbId } } }));
  }

  /** Poll the base's ingestion until nothing is processing; its status then. */
  async waitIndexed(kbId: string, { timeoutMs = 300_000, intervalMs = 500 } = {}): Promise<IngestionStatus> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const status = await this.ingestion(kbId);
      if (status.processing_count === 0 && status.indexing_status === "complete") return status;
      if (Date.now() > deadline) throw new Error(`knowledge base ${kbId} still indexing after ${timeoutMs} ms`);
      await sleep(intervalMs);
    }
  }

  /** Every document of the base, newest first, `pageSize` at a time (`next_cursor`). */
  async *documents(kbId: string, { pageSize = 50 } = {}): AsyncGenerator<DocumentOut> {
    let cursor: string | null = null;
    do {
      const page: Schemas["DocumentPage"] = ok(
        await this.api.GET("/api/v1/kb/{kb_id}/documents", {
          params: { path: { kb_id: kbId }, query: { limit: pageSize, cursor } },
        }),
      );
      yield* page.items;
      cursor = page.next_cursor;
    } while (cursor !== null);
  }

  /** Upload a file (a `Blob`, so also a `File`) into the base: the 202 answer, whose
   * `tracking_id` is the document's id. */
  async upload(kbId: string, file: Blob, filename: string, options: UploadOptions = {}): Promise<IngestAnswer> {
    const deadline = Date.now() + (options.busyTimeoutMs ?? 120_000);
    for (;;) {
      const form = new FormData();
      form.append("file", file, filename);
      if (options.ingestion) form.append("ingestion", JSON.stringify(options.ingestion));
      if (options.organizationalUnit) form.append("organizational_unit", options.organizationalUnit);
      if (options.documentDate) form.append("document_date", options.documentDate);
      const answer = await this.api.POST("/api/v1/kb/{kb_id}/documents", {
        params: { path: { kb_id: kbId }, query: { replace: options.replace ?? false } },
        body: { file: filename },
        bodySerializer: () => form,
      });
      try {
        return ok(answer);
      } catch (error) {
        const wait = error instanceof DocprocError ? error.retryAfter : undefined;
        if (!(error instanceof DocprocError) || error.status !== 503 || wait === undefined) throw error;
        if (Date.now() + wait * 1000 > deadline) throw error;
        await sleep(wait * 1000);
      }
    }
  }

  /** A text (a note, an answer) as a `.md` or `.txt` document of the base. */
  async uploadText(kbId: string, text: string, filename = "note.md", options: UploadOptions = {}): Promise<IngestAnswer> {
    return this.upload(kbId, new Blob([text], { type: "text/plain" }), filename, options);
  }

  /** The best chunks of the bases named, or of every base on the collections named; each
   * hit with its citation (`cite`). No `mode`: the server's default (hybrid). */
  async search(query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
    const body: SearchRequest = { query, top_k: options.topK ?? 5 };
    if (options.mode) body.mode = options.mode;
    if (options.knowledgeBaseIds) body.knowledge_base_ids = options.knowledgeBaseIds;
    if (options.collections) body.collections = options.collections;
    if (options.filters) body.filters = options.filters;
    return ok(await this.api.POST("/api/v1/rag/search", { body })).results;
  }

  /** The document's chunks page by page (the view a hit's `links.parsed` names). */
  async parsed(kbId: string, documentId: string): Promise<ParsedPages> {
    return ok(
      await this.api.GET("/api/v1/kb/{kb_id}/documents/{document_id}/parsed", {
        params: { path: { kb_id: kbId, document_id: documentId } },
      }),
    );
  }

  /** A hit's chunk and up to `before`/`after` chunks around it, in order. */
  async chunkContext(documentId: string, chunkNo: number, { before = 2, after = 2 } = {}): Promise<ChunkContext> {
    return ok(
      await this.api.GET("/api/v1/rag/documents/{document_id}/chunks", {
        params: { path: { document_id: documentId }, query: { chunk_no: chunkNo, before, after } },
      }),
    );
  }

  /** The original file of an uploaded document. */
  async download(kbId: string, documentId: string): Promise<ArrayBuffer> {
    const answer = await this.api.GET("/api/v1/kb/{kb_id}/documents/{document_id}/download", {
      params: { path: { kb_id: kbId, document_id: documentId } },
      parseAs: "arrayBuffer",
    });
    return ok(answer as { data?: ArrayBuffer; error?: unknown; response: Response });
  }

  /** A hit's link (a path under the API's root) as a URL of this deployment. */
  url(link: string): string {
    return this.baseUrl + link;
  }
}
