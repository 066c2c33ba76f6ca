// A knowledge base's evaluation sets beside its settings: each set's runs (nDCG@10 per
// search mode, when, and the settings it ran with) and a Run button, so an owner sees what a
// chunking or mode change did. Sets are made through the API (docs/search.md, "Evaluations").

import { ApiError, api, type Evaluation, type EvaluationRun, type KnowledgeBase } from "../api";
import { h, loadInto } from "../dom";
import { canEdit } from "./documents";

const MODES = ["vector", "keyword", "hybrid", "rerank"] as const;

export function evaluationsSection(kb: KnowledgeBase): HTMLElement {
  const body = h("div", {}, h("p", { role: "status" }, "Loading the evaluation sets…"));
  const section = h(
    "section",
    { class: "card", "aria-labelledby": "evaluations-title", "data-testid": "evaluations" },
    h("h2", { id: "evaluations-title" }, "Evaluations"),
    h(
      "p",
      {},
      "How well each search mode finds the documents judged relevant to each query of a set, ",
      "run on the base as it stands and kept with its settings. Sets are made through the API ",
      "(",
      h("code", {}, `POST /api/v1/kb/${kb.id}/evaluations`),
      ", or BEIR's files).",
    ),
    body,
  );
  void load(kb, body);
  return section;
}

function load(kb: KnowledgeBase, body: HTMLElement): Promise<void> {
  return loadInto(body, "The evaluation sets", () => api<Evaluation[]>("GET", `/kb/${kb.id}/evaluations`), (sets) =>
    sets.length ? sets.map((set) => evaluation(kb, set)) : h("p", { class: "empty" }, "No evaluation set yet."),
  );
}

function evaluation(kb: KnowledgeBase, set: Evaluation): HTMLElement {
  const status = h("p", { role: "status" });
  const history = h("div", {});
  const titleId = `evaluation-${set.id}`;
  const run = async (button: HTMLButtonElement): Promise<void> => {
    button.disabled = true;
    status.textContent = `Running ${set.query_count} queries in every mode…`;
    try {
      const done = await api<EvaluationRun>("POST", `/kb/${kb.id}/evaluations/${set.id}/run`);
      status.textContent = `Ran: nDCG@10 ${MODES.map((m) => `${m} ${score(done, m)}`).join(", ")}.`;
      await runs(kb, set, history);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      status.textContent = `The run was refused: ${error.message}`;
    } finally {
      button.disabled = false;
    }
  };
  const article = h(
    "article",
    { class: "evaluation", "data-evaluation": set.name, "aria-labelledby": titleId },
    h("h3", { id: titleId }, set.name),
    h("p", { class: "hint" }, `${set.query_count} queries, ${set.judgment_count} judged documents, made by ${set.created_by}.`),
    canEdit()
      ? h(
          "div",
          { class: "buttons" },
          h(
            "button",
            { type: "button", onclick: (event: Event) => void run(event.currentTarget as HTMLButtonElement) },
            `Run ${set.name}`,
          ),
        )
      : null,
    status,
    history,
  );
  void runs(kb, set, history);
  return article;
}

function runs(kb: KnowledgeBase, set: Evaluation, into: HTMLElement): Promise<void> {
  return loadInto(into, "The runs", () => api<EvaluationRun[]>("GET", `/kb/${kb.id}/evaluations/${set.id}/runs`), (list) =>
    list.length
      ? h(
          "table",
          { "data-testid": "runs" },
          h("caption", { class: "visually-hidden" }, `Runs of ${set.name}, newest first`),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ...["When", "Run", ...MODES.map((m) => `${m} nDCG@10`), "Settings"].map((t) => h("th", { scope: "col" }, t)),
            ),
          ),
          h("tbody", {}, list.map(row)),
        )
      : h("p", { class: "empty" }, "Not run yet."),
  );
}

function row(run: EvaluationRun): HTMLElement {
  const when = new Date(run.started_at).toLocaleString();
  const who = run.trigger === "manual" ? `manual (${run.started_by ?? ""})` : "scheduled";
  const cells =
    run.status === "failed"
      ? [h("td", { class: "message", colspan: MODES.length }, run.error ?? "failed")]
      : MODES.map((m) => h("td", { "data-mode": m, title: detail(run, m) }, score(run, m)));
  return h("tr", { "data-run": run.id }, h("td", {}, when), h("td", {}, who), ...cells, h("td", {}, settings(run)));
}

function score(run: EvaluationRun, mode: (typeof MODES)[number]): string {
  const scores = run.scores[mode];
  return scores ? scores.ndcg_at_10.toFixed(3) : "—";
}

function detail(run: EvaluationRun, mode: (typeof MODES)[number]): string {
  const s = run.scores[mode];
  if (!s) return run.skipped[mode] ?? "";
  return `recall@10 ${s.recall_at_10.toFixed(3)}, recall@100 ${s.recall_at_100.toFixed(3)}, MRR@10 ${s.mrr_at_10.toFixed(3)}`;
}

function settings(run: EvaluationRun): string {
  const config = run.settings.ingestion_config;
  const parts = [
    run.settings.embedding_model,
    `chunks ${String(config.chunk_size ?? "?")}/${String(config.chunk_overlap ?? "?")}`,
    `default mode ${run.settings.search_default_mode}`,
  ];
  if (run.settings.hybrid_vector_weight != null) parts.push(`vector weight ${run.settings.hybrid_vector_weight}`);
  if (run.missing_documents) parts.push(`${run.missing_documents} judged documents gone`);
  return parts.join(" · ");
}
