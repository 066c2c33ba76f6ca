// A knowledge base's sync sources: the list with runs and logs, and a wizard per connector
// (its configuration form, the vault secrets of its kind, the audience sentence before saving).

import { ApiError, api, type Connector, type KnowledgeBase, type Secret, type SyncLogPage, type SyncSource } from "../api";
import { clearFieldErrors, field, formError, h, loadInto, select, showFieldErrors } from "../dom";
import { numberOrText } from "../ingestion";
import { schemaForm, type JsonSchema } from "../schemaform";
import { kbHeader, kbScreen } from "./documents";
import { vaultLink } from "./vault";

export function syncScreen(main: HTMLElement, _config: unknown, [kbId]: string[]): void {
  kbScreen(main, kbId, "Sync sources", (kb) => {
    const list = h("div");
    const sources = h("section", { "aria-labelledby": "sources-title" }, h("h2", { id: "sources-title" }, "Sources"), list);
    const logs = h("section", { "aria-labelledby": "logs-title", hidden: true });
    const wizard = h("section", { class: "card", "aria-labelledby": "wizard-title" });
    const reload = (): Promise<void> => listSources(kb, list, logs);
    void reload();
    void loadInto(wizard, "The connectors", () => api<Connector[]>("GET", "/rag/sync/connectors"), (connectors) => {
      chooseConnector(kb, connectors, wizard, reload);
      return [];
    });
    return [kbHeader(kb, "sync"), sources, logs, wizard];
  });
}

function listSources(kb: KnowledgeBase, list: HTMLElement, logs: HTMLElement): Promise<void> {
  return loadInto(list, "The sources", () => api<SyncSource[]>("GET", `/kb/${kb.id}/sync-sources`), (sources) =>
    sources.length ? sourcesTable(kb, sources, logs) : h("p", { class: "empty" }, "No source yet: add one with the wizard below."),
  );
}

function sourcesTable(kb: KnowledgeBase, sources: SyncSource[], logs: HTMLElement): HTMLElement {
  return h(
    "table",
    { "data-testid": "sources" },
    h("thead", {}, h("tr", {}, ...["Name", "Connector", "Last run", ""].map((t) => h("th", { scope: "col" }, t)))),
    h(
      "tbody",
      {},
      sources.map((src) =>
        h(
          "tr",
          { "data-source": src.name ?? src.id },
          h("td", {}, src.name ?? "(unnamed)"),
          h("td", {}, src.connector),
          h("td", {}, src.last_run_at ? new Date(src.last_run_at).toLocaleString() : "never"),
          h(
            "td",
            { class: "actions" },
            h(
              "button",
              {
                type: "button",
                onclick: async () => {
                  try {
                    await api("POST", `/kb/${kb.id}/sync-sources/${src.id}/run`);
                  } catch (error) {
                    if (!(error instanceof ApiError)) throw error;
                    window.alert(error.message);
                  }
                  await showLogs(kb, src, logs);
                },
              },
              "Run now",
            ),
            h("button", { type: "button", class: "secondary", onclick: () => showLogs(kb, src, logs) }, "Runs and logs"),
          ),
        ),
      ),
    ),
  );
}

async function showLogs(kb: KnowledgeBase, src: SyncSource, section: HTMLElement): Promise<void> {
  const page = await api<SyncLogPage>("GET", `/kb/${kb.id}/sync-sources/${src.id}/logs?limit=20`);
  const rows = page.items.map((run) =>
    h(
      "tr",
      {},
      h("td", {}, new Date(run.started_at).toLocaleString()),
      h("td", {}, run.mode),
      h("td", {}, h("span", { class: `badge ${run.status}` }, run.status)),
      h("td", {}, `${run.ingested} new, ${run.updated} updated, ${run.skipped} unchanged, ${run.failed} failed, ${run.deleted} deleted of ${run.total_files}`),
      h("td", { class: "message" }, run.error_message ?? ""),
    ),
  );
  section.hidden = false;
  section.replaceChildren(
    h("h2", { id: "logs-title" }, `Runs of ${src.name ?? src.connector}`),
    h(
      "table",
      { "data-testid": "runs" },
      h("thead", {}, h("tr", {}, ...["Started", "Mode", "Status", "Files", "Message"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { colspan: 5 }, "No run yet."))),
    ),
    h("button", { type: "button", class: "secondary", onclick: () => showLogs(kb, src, section) }, "Refresh"),
  );
}

function chooseConnector(kb: KnowledgeBase, connectors: Connector[], wizard: HTMLElement, saved: () => Promise<void>): void {
  const options = connectors.map((c) =>
    h(
      "li",
      {},
      h(
        "button",
        { type: "button", class: "connector", "data-connector": c.name, onclick: () => configure(kb, c, wizard, saved, connectors) },
        h("strong", {}, c.title),
        h("span", {}, c.description),
      ),
    ),
  );
  wizard.replaceChildren(
    h("h2", { id: "wizard-title" }, "Add a source: 1. choose a connector"),
    h("ul", { class: "connectors" }, options),
  );
}

function configure(
  kb: KnowledgeBase,
  connector: Connector,
  wizard: HTMLElement,
  saved: () => Promise<void>,
  connectors: Connector[],
): void {
  const config = schemaForm(connector.config_schema as JsonSchema, `${connector.title} configuration`);
  const name = field("Source name", "name", h("input", { placeholder: connector.title }));
  const secret = field(
    connector.secret_kind ? `Credential (${connector.secret_kind} secret)` : "Credential",
    "secret_id",
    select([]),
    connector.secret_kind
      ? `The vault's ${connector.secret_kind} secrets of this organization. A credential never goes in the configuration.`
      : undefined,
  );
  const kind = connector.secret_kind;
  if (kind) {
    const secrets = h("div");
    secret.row.append(secrets);
    void loadInto(secrets, `The vault's ${kind} secrets`, () => api<Secret[]>("GET", `/secrets?kind=${kind}`), (found) => {
      secret.input.replaceChildren(
        h("option", { value: "" }, found.length ? "Choose a secret" : `No ${kind} secret in the vault`),
        ...found.map((s) => h("option", { value: s.id }, `${s.name} (${s.visibility})`)),
      );
      return found.length ? [] : vaultLink(kind, null, `Add a ${kind} secret to the vault`);
    });
  }
  const schedule = field(
    "Run every (seconds)",
    "schedule_seconds",
    h("input", { type: "number", placeholder: "only when asked" }),
  );
  const unit = field(
    "Organizational unit",
    "organizational_unit",
    h("input"),
    "Every document this source brings is filed under it",
  );
  const banner = formError();
  const review = h("div", { class: "review", hidden: true, "data-testid": "review" });
  const form = h(
    "form",
    { novalidate: true },
    banner,
    name.row,
    config.fieldset,
    connector.secret_kind ? secret.row : null,
    schedule.row,
    unit.row,
    h(
      "div",
      { class: "buttons" },
      h("button", { type: "button", class: "secondary", onclick: () => chooseConnector(kb, connectors, wizard, saved) }, "Back"),
      h("button", { type: "submit" }, "Review"),
    ),
    review,
  );
  const body = (): Record<string, unknown> => {
    const out: Record<string, unknown> = { connector: connector.name, config: config.values() };
    if (name.input.value.trim()) out.name = name.input.value.trim();
    if (connector.secret_kind && secret.input.value) out.secret_id = secret.input.value;
    if (schedule.input.value.trim()) out.schedule_seconds = numberOrText(schedule.input.value);
    if (unit.input.value.trim()) out.organizational_unit = unit.input.value.trim();
    return out;
  };
  const post = (dryRun: boolean): Promise<SyncSource> =>
    api<SyncSource>("POST", `/kb/${kb.id}/sync-sources${dryRun ? "?dry_run=true" : ""}`, body());
  // Any change after the review takes the review back: the sentence was about the old choice.
  form.addEventListener("input", () => {
    review.hidden = true;
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    review.hidden = true;
    let checked: SyncSource;
    try {
      checked = await post(true);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      showFieldErrors(form, error);
      return;
    }
    const sentence = checked.audience
      ? h("p", { class: "audience", "data-testid": "audience" }, checked.audience)
      : h(
          "p",
          { class: "audience", "data-testid": "audience" },
          connector.secret_kind
            ? "Your token does not grant secrets:view, so the credential's audience cannot be shown."
            : `This connector reads public content; everything it ingests becomes searchable by whoever can read ${kb.collection_name}.`,
        );
    const save = h("button", { type: "button" }, "Save source");
    save.addEventListener("click", async () => {
      try {
        await post(false);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        showFieldErrors(form, error);
        return;
      }
      await saved();
      chooseConnector(kb, connectors, wizard, saved);
      wizard.prepend(h("p", { role: "status", class: "saved" }, `Saved the ${connector.title} source.`));
    });
    review.replaceChildren(h("h3", {}, "3. Who will be able to read what it syncs"), sentence, save);
    review.hidden = false;
    save.focus();
  });
  wizard.replaceChildren(h("h2", { id: "wizard-title" }, `Add a source: 2. configure ${connector.title}`), form);
  (form.querySelector("input, select") as HTMLElement | null)?.focus();
}
