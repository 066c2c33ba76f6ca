// A knowledge base's settings: how its next uploads are read (PATCH only what changed), a
// reindex of what it holds with them, and beside them its evaluation sets and their history.

import { ApiError, api, type KnowledgeBase, type ReindexOut } from "../api";
import { clearFieldErrors, field, formError, h, showFieldErrors } from "../dom";
import { ingestionInputs } from "../ingestion";
import { visionInputs } from "../vision";
import { kbHeader, kbScreen } from "./documents";
import { evaluationsSection } from "./evaluations";

export function settingsScreen(main: HTMLElement, _config: unknown, [kbId]: string[]): void {
  kbScreen(main, kbId, "Settings", draw);
}

function draw(kb: KnowledgeBase): HTMLElement[] {
  const ingestion = ingestionInputs(kb.ingestion_config);
  const vision = visionInputs(kb.ingestion_config);
  const weight = field(
    "Vector weight in hybrid search",
    "hybrid_vector_weight",
    h("input", {
      type: "number",
      min: "0",
      max: "1",
      step: "0.05",
      placeholder: "0.6 (the default)",
      value: kb.hybrid_vector_weight == null ? "" : String(kb.hybrid_vector_weight),
    }),
    "0 to 1: the vector ranking's share of the blend, the keyword ranking has the rest. Blank is the default. Run an evaluation set below to compare.",
  );
  const search = h("fieldset", {}, h("legend", {}, "Search"), weight.row);
  const banner = formError();
  const status = h("p", { role: "status" });
  const form = h(
    "form",
    { class: "card", "aria-labelledby": "settings-title", novalidate: true },
    h("h2", { id: "settings-title" }, "Settings"),
    h(
      "p",
      {},
      `Embedding: ${kb.embedding_provider} · ${kb.embedding_model} (${kb.embedding_dim} dimensions), fixed at creation. `,
      `New settings apply to the next uploads; documents already indexed keep their chunks until a reindex.`,
    ),
    banner,
    ingestion.fieldset,
    vision.fieldset,
    search,
    h(
      "div",
      { class: "buttons" },
      h("button", { type: "submit" }, "Save settings"),
      h(
        "button",
        {
          type: "button",
          class: "secondary",
          onclick: async () => {
            const out = await api<ReindexOut>("POST", `/kb/${kb.id}/reindex`);
            status.textContent = `Reindexing ${out.queued} document(s) with the saved settings.`;
          },
        },
        "Reindex",
      ),
    ),
    status,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    const changed = { ...ingestion.values(kb.ingestion_config), ...vision.values(kb.ingestion_config) };
    const body: Record<string, unknown> = Object.keys(changed).length ? { ingestion_config: changed } : {};
    const typed = weight.input.value.trim();
    const blend = typed === "" ? null : Number(typed);
    if (blend !== (kb.hybrid_vector_weight ?? null)) body.hybrid_vector_weight = Number.isNaN(blend) ? typed : blend;
    if (!Object.keys(body).length) {
      status.textContent = "Nothing changed.";
      return;
    }
    try {
      kb = await api<KnowledgeBase>("PATCH", `/kb/${kb.id}`, body);
      status.textContent = "Saved.";
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      showFieldErrors(form, error);
    }
  });
  return [kbHeader(kb, "settings"), form, evaluationsSection(kb)];
}
