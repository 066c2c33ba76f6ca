// Knowledge bases: the list, a base's creation (the embedding catalog, scope, ingestion), and
// deletion with what happens to its name.

import { ApiError, api, claims, type EmbeddingCatalog, type EmbeddingProvider, type KnowledgeBase, type Secret } from "../api";
import { clearFieldErrors, confirmDeletion, field, formError, h, loadInto, select, showFieldErrors } from "../dom";
import { ingestionInputs } from "../ingestion";
import { vaultLink } from "./vault";

export function basesScreen(main: HTMLElement): void {
  const list = h("div");
  const create = h("div");
  main.append(h("section", { "aria-labelledby": "bases-title" }, h("h1", { id: "bases-title" }, "Knowledge bases"), list), create);
  void refresh(list);
  void loadInto(create, "The embedding models", () => api<EmbeddingCatalog>("GET", "/rag/embedding-models"), (catalog) =>
    createForm(catalog.providers),
  );
}

function refresh(list: HTMLElement): Promise<void> {
  return loadInto(list, "The knowledge bases", () => api<KnowledgeBase[]>("GET", "/kb"), (bases) => table(bases, list));
}

function table(bases: KnowledgeBase[], list: HTMLElement): HTMLElement {
  if (!bases.length) return h("p", { class: "empty" }, "No knowledge base yet: create one below.");
  const rows = bases.map((kb) =>
    h(
      "tr",
      { "data-kb": kb.collection_name },
      h("td", {}, h("a", { href: `#/kb/${kb.id}` }, kb.name)),
      h("td", {}, h("code", {}, kb.collection_name)),
      h("td", {}, kb.scope),
      h("td", {}, `${kb.embedding_provider} · ${kb.embedding_model}`),
      h(
        "td",
        { class: "actions" },
        h("a", { href: `#/kb/${kb.id}/settings` }, "Settings"),
        h("a", { href: `#/kb/${kb.id}/sync` }, "Sync sources"),
        h("button", { type: "button", class: "danger", onclick: () => confirmDelete(kb, list) }, "Delete"),
      ),
    ),
  );
  return h(
    "table",
    {},
    h("caption", { class: "visually-hidden" }, "Knowledge bases you can read"),
    h(
      "thead",
      {},
      h("tr", {}, ...["Name", "Collection", "Scope", "Embedding model", "Actions"].map((t) => h("th", { scope: "col" }, t))),
    ),
    h("tbody", {}, rows),
  );
}

function confirmDelete(kb: KnowledgeBase, list: HTMLElement): void {
  confirmDeletion(
    kb.name,
    [
      `Its documents go now, and its chunks, table and files shortly after, in the teardown service. `,
      `Until that is done the name `,
      h("code", {}, kb.collection_name),
      ` stays reserved: nothing can create a base on it or write into it. `,
      kb.is_default ? "This is the organization's default base: it is emptied, not deleted." : "",
    ],
    `/kb/${kb.id}`,
    () => void refresh(list),
  );
}

function createForm(providers: EmbeddingProvider[]): HTMLElement {
  const who = claims();
  const name = field("Name", "name", h("input", { required: true }));
  const collection = field(
    "Collection name",
    "collection_name",
    h("input", { placeholder: "handbook" }),
    "Lowercase letters, digits and underscores; the name searches use. Defaults to the name.",
  );
  const scopes: [string, string][] = [["personal", "Personal (only you and those you grant)"]];
  if (who?.org) scopes.push(["org", `Organization (${who.org})`]);
  if (who?.app_admin) scopes.push(["app", "App (the whole deployment)"]);
  const scope = field("Scope", "scope", select(scopes, who?.org ? "org" : "personal"));
  const provider = field(
    "Embedding provider",
    "embedding_provider",
    select(providers.map((p) => [p.name, p.label])),
  );
  const model = field("Embedding model", "embedding_model", h("select"));
  const secret = field("API key (vault secret)", "embedding_secret_id", h("select"));
  const keys = h("div");
  secret.row.append(keys);
  const ingestion = ingestionInputs();
  const banner = formError();

  // An api_key is bound to the provider it names: only those of the chosen provider are offered.
  const fillKeys = (chosen: EmbeddingProvider): Promise<void> =>
    loadInto(keys, "The vault's api_key secrets", () => api<Secret[]>("GET", "/secrets?kind=api_key"), (all) => {
      const mine = all.filter((k) => k.provider === chosen.name);
      secret.input.replaceChildren(
        h("option", { value: "" }, mine.length ? "Choose a key" : `No ${chosen.name} api_key in the vault`),
        ...mine.map((k) => h("option", { value: k.id }, k.name)),
      );
      return mine.length ? [] : vaultLink("api_key", chosen.name, `Add a key for ${chosen.label} to the vault`);
    });
  const fillModels = (): void => {
    const chosen = providers.find((p) => p.name === provider.input.value);
    model.input.replaceChildren(
      ...(chosen?.models ?? []).map((m) => h("option", { value: m.model }, `${m.model} (${m.dimensions} dimensions)`)),
    );
    secret.row.hidden = chosen?.credential !== "secret";
    if (chosen?.credential === "secret") void fillKeys(chosen);
  };
  provider.input.addEventListener("change", fillModels);
  fillModels();

  const form = h(
    "form",
    { class: "card", "aria-labelledby": "create-title", novalidate: true },
    h("h2", { id: "create-title" }, "Create a knowledge base"),
    banner,
    name.row,
    collection.row,
    scope.row,
    h("fieldset", {}, h("legend", {}, "Embedding"), provider.row, model.row, secret.row),
    ingestion.fieldset,
    h("button", { type: "submit" }, "Create"),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    const body: Record<string, unknown> = {
      name: name.input.value.trim(),
      scope: scope.input.value,
      embedding_provider: provider.input.value,
      embedding_model: model.input.value,
      ingestion_config: ingestion.values(),
    };
    if (collection.input.value.trim()) body.collection_name = collection.input.value.trim();
    if (!secret.row.hidden && secret.input.value) body.embedding_secret_id = secret.input.value;
    try {
      const kb = await api<KnowledgeBase>("POST", "/kb", body);
      location.hash = `#/kb/${kb.id}`;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      showFieldErrors(form, error);
    }
  });
  return form;
}
