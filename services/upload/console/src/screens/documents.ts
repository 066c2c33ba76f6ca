// A knowledge base's documents: drop anywhere (or choose, or paste) to upload, the table
// with live status, the collection's honest status, and the search playground.

import {
  ApiError,
  api,
  claims,
  type ConsoleConfig,
  type DocumentPage,
  type DocumentRow,
  type IngestionStatus,
  type KnowledgeBase,
  type SearchHit,
  type SearchResponse,
} from "../api";
import { field, formatBytes, h, loadInto, select } from "../dom";
import { onLongPaste, setDropTarget } from "../dropzone";

const POLL_MS = 1500;
const STATUS_TEXT: Record<string, string> = { processing: "processing", done: "indexed", error: "failed" };

export function kbHeader(kb: KnowledgeBase, active: "documents" | "settings" | "sync"): HTMLElement {
  const tab = (key: typeof active, href: string, text: string): HTMLElement =>
    h("a", { href, "aria-current": key === active ? "page" : undefined }, text);
  return h(
    "div",
    { class: "kb-header" },
    h("p", { class: "crumbs" }, h("a", { href: "#/" }, "Knowledge bases"), " / ", kb.name),
    h("h1", {}, kb.name, " ", h("code", {}, kb.collection_name)),
    h(
      "nav",
      { class: "tabs", "aria-label": "Knowledge base" },
      tab("documents", `#/kb/${kb.id}`, "Documents"),
      tab("settings", `#/kb/${kb.id}/settings`, "Settings"),
      tab("sync", `#/kb/${kb.id}/sync`, "Sync sources"),
    ),
  );
}

export function canEdit(): boolean {
  return claims()?.permissions.includes("collections:edit") ?? false;
}

/** A knowledge base's screen (documents, settings, sync): the base loaded, then `draw`n. */
export function kbScreen(main: HTMLElement, kbId: string, title: string, draw: (kb: KnowledgeBase) => Node | Node[]): void {
  const place = h("div");
  main.append(place);
  void loadInto(place, "The knowledge base", () => api<KnowledgeBase>("GET", `/kb/${kbId}`), draw, title);
}

export function documentsScreen(main: HTMLElement, config: ConsoleConfig, [kbId]: string[]): () => void {
  let stopped = false;
  let timer = 0;
  kbScreen(main, kbId, "Documents", (kb) => {
    const screen = new DocumentsScreen(config, kb);
    // Each poll is also the retry of the one before: a failed one is said until one succeeds.
    const tick = async (): Promise<void> => {
      if (stopped) return;
      try {
        await screen.refresh();
      } finally {
        if (!stopped) timer = window.setTimeout(tick, POLL_MS);
      }
    };
    void tick();
    return screen.nodes;
  });
  return () => {
    stopped = true;
    window.clearTimeout(timer);
    setDropTarget(null);
  };
}

class DocumentsScreen {
  private readonly status = h("p", { class: "collection-status", role: "status", "data-testid": "collection-status" });
  private readonly failed = h("p", { class: "form-error", role: "alert", hidden: true });
  private readonly uploads = h("ul", { class: "uploads", "aria-label": "Uploads", "data-testid": "uploads" });
  private readonly tbody = h("tbody");
  private readonly unit = field(
    "Organizational unit",
    "organizational_unit",
    h("input", { placeholder: "HR" }),
    "Filed on every file added from here until it is cleared",
  );

  /** What the screen draws. */
  readonly nodes: HTMLElement[];

  constructor(
    private readonly config: ConsoleConfig,
    private readonly kb: KnowledgeBase,
  ) {
    const chooser = h("input", {
      type: "file",
      multiple: true,
      id: "choose-files",
      class: "visually-hidden",
      tabindex: "-1",
      "aria-label": "Files to upload",
    });
    chooser.addEventListener("change", () => {
      this.accept(Array.from(chooser.files ?? []));
      chooser.value = "";
    });
    const paste = field(
      "Paste text",
      "paste",
      h("textarea", { rows: 3, placeholder: "Paste a long text (over 2,000 characters) to add it as a document" }),
      "A paste of more than 2,000 characters becomes pasted-<date>.txt; a shorter one stays here.",
    );
    onLongPaste(paste.input as HTMLTextAreaElement, canEdit, (file) => this.accept([file]));
    setDropTarget({
      enabled: canEdit,
      limitMb: config.max_upload_size_mb,
      label: `Drop files to add them to ${kb.name}`,
      accept: (files) => this.accept(files),
    });
    this.nodes = [
      kbHeader(kb, "documents"),
      this.failed,
      this.status,
      h(
        "section",
        { class: "card", "aria-labelledby": "upload-title" },
        h("h2", { id: "upload-title" }, "How the next uploads are read and filed"),
        canEdit()
          ? h(
              "p",
              {},
              `Drop files anywhere on this page (up to ${config.max_upload_size_mb} MB each), or `,
              h("button", { type: "button", class: "secondary inline", onclick: () => chooser.click() }, "choose files"),
              ".",
              chooser,
            )
          : h("p", {}, "Your token does not grant collections:edit: this base is read-only for you."),
        this.unit.row,
        paste.row,
        this.uploads,
      ),
      h(
        "section",
        { "aria-labelledby": "docs-title" },
        h("h2", { id: "docs-title" }, "Documents"),
        h(
          "table",
          { "data-testid": "documents" },
          h(
            "thead",
            {},
            h("tr", {}, ...["File", "Type", "Size", "Status", "Chunks", "Message", ""].map((t) => h("th", { scope: "col" }, t))),
          ),
          this.tbody,
        ),
      ),
      searchPanel(kb),
    ];
  }

  accept(files: File[]): void {
    for (const file of files) void this.upload(file);
  }

  private async upload(file: File): Promise<void> {
    const item = h("li", { "data-file": file.name }, h("span", { class: "name" }, file.name), " ", h("span", { class: "state" }, "uploading…"));
    this.uploads.prepend(item);
    const state = item.querySelector(".state")!;
    const limit = this.config.max_upload_size_mb;
    if (file.size > limit * 1024 * 1024) {
      this.refused(item, `The file is larger than MAX_UPLOAD_SIZE_MB (${limit} MB)`);
      return;
    }
    const form = new FormData();
    form.append("file", file, file.name);
    const unit = this.unit.input.value.trim();
    if (unit) form.append("organizational_unit", unit);
    try {
      await api("POST", `/kb/${this.kb.id}/documents`, form);
      state.textContent = "accepted";
      item.classList.add("accepted");
      await this.refresh();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      this.refused(item, error.message);
    }
  }

  private refused(item: HTMLElement, reason: string): void {
    item.classList.add("refused");
    item.setAttribute("role", "alert");
    item.querySelector(".state")!.textContent = `refused: ${reason}`;
  }

  async refresh(): Promise<void> {
    let page: DocumentPage;
    let ingestion: IngestionStatus;
    try {
      [page, ingestion] = await Promise.all([
        api<DocumentPage>("GET", `/kb/${this.kb.id}/documents?limit=100`),
        api<IngestionStatus>("GET", `/kb/${this.kb.id}/ingestion`),
      ]);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      this.failed.textContent = `The documents could not be loaded: ${error.message}. Trying again every few seconds.`;
      this.failed.hidden = false;
      return;
    }
    this.failed.hidden = true;
    this.status.textContent =
      ingestion.indexing_status === "indexing"
        ? `Indexing: ${ingestion.processing_count} processing, ${ingestion.indexed_count} indexed, ${ingestion.failed_count} failed of ${ingestion.document_count}`
        : `Complete: ${ingestion.indexed_count} indexed, ${ingestion.failed_count} failed of ${ingestion.document_count}`;
    this.status.dataset.state = ingestion.indexing_status;
    this.tbody.replaceChildren(...page.items.map((doc) => this.row(doc)));
    if (!page.items.length) {
      this.tbody.append(h("tr", {}, h("td", { colspan: 7, class: "empty" }, "No documents yet.")));
    }
  }

  private row(doc: DocumentRow): HTMLElement {
    const retry =
      doc.status === "error" && canEdit()
        ? h(
            "button",
            {
              type: "button",
              class: "secondary",
              "aria-label": `Retry ${doc.filename}`,
              onclick: async () => {
                await api("POST", `/rag/documents/${doc.id}/retry`);
                await this.refresh();
              },
            },
            "Retry",
          )
        : null;
    return h(
      "tr",
      { "data-document": doc.filename, "data-status": doc.status },
      h("td", {}, doc.filename),
      h("td", {}, doc.filetype),
      h("td", {}, formatBytes(doc.filesize)),
      h("td", {}, h("span", { class: `badge ${doc.status}` }, STATUS_TEXT[doc.status] ?? doc.status)),
      h("td", {}, String(doc.chunk_count)),
      h("td", { class: "message" }, doc.error_message ?? ""),
      h("td", {}, retry),
    );
  }
}

/** Where a hit is in its document: its pages, else the headings above it (null before citations). */
function where(hit: SearchHit): string {
  if (hit.page_start !== null) return hit.crosses_pages ? `pp. ${hit.page_start}-${hit.page_end}` : `p. ${hit.page_start}`;
  return (hit.heading_path ?? []).join(" > ");
}

function commaList(value: string): string[] | undefined {
  const items = value.split(",").map((s) => s.trim()).filter(Boolean);
  return items.length ? items : undefined;
}

function searchPanel(kb: KnowledgeBase): HTMLElement {
  const query = field("Query", "query", h("input", { type: "search", required: true }));
  const mode = field(
    "Mode",
    "mode",
    select([
      ["hybrid", "Hybrid (meaning and words; the default)"],
      ["vector", "Vector (meaning)"],
      ["keyword", "Keyword (words, BM25)"],
    ]),
  );
  const source = field("Source", "filters.source", h("input", { placeholder: "upload, s3" }), "Comma-separated");
  const type = field("Type", "filters.document_type", h("input", { placeholder: "pdf, md" }), "Comma-separated");
  const unit = field("Organizational unit", "filters.organizational_unit", h("input"), "Comma-separated");
  const from = field("From", "filters.date_from", h("input", { type: "date" }));
  const to = field("To", "filters.date_to", h("input", { type: "date" }));
  const results = h("ol", { class: "results", "aria-label": "Results", "data-testid": "results" });
  const note = h("p", { role: "status" });
  const form = h(
    "form",
    { class: "card search", "aria-labelledby": "search-title" },
    h("h2", { id: "search-title" }, "Search"),
    query.row,
    mode.row,
    h("fieldset", { class: "filters" }, h("legend", {}, "Filters"), source.row, type.row, unit.row, from.row, to.row),
    h("button", { type: "submit" }, "Search"),
    note,
    results,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const filters: Record<string, unknown> = {
      source: commaList(source.input.value),
      document_type: commaList(type.input.value),
      organizational_unit: commaList(unit.input.value),
      date_from: from.input.value || undefined,
      date_to: to.input.value || undefined,
    };
    const body = {
      query: query.input.value,
      knowledge_base_ids: [kb.id],
      top_k: 5,
      mode: mode.input.value,
      filters: Object.values(filters).some((v) => v !== undefined) ? filters : undefined,
    };
    try {
      const { results: hits } = await api<SearchResponse>("POST", "/rag/search", body);
      note.textContent = hits.length ? `${hits.length} result(s)` : "No result.";
      results.replaceChildren(
        ...hits.map((hit) =>
          h(
            "li",
            {},
            h(
              "p",
              { class: "hit-head" },
              h("strong", {}, hit.filename ?? "(no file)"),
              [where(hit), `chunk ${hit.chunk_no}`, `score ${hit.score.toFixed(3)}`].map((part) => (part ? ` · ${part}` : "")).join(""),
            ),
            h("p", { class: "hit-text" }, hit.content),
          ),
        ),
      );
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      note.textContent = [error.message, ...error.fields.map((f) => `${f.field}: ${f.message}`)].join(" — ");
      results.replaceChildren();
    }
  });
  return form;
}
