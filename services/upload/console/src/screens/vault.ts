// The vault: the secrets the caller can see (metadata only: a value is never shown again once
// saved), a secret of any kind created with its value's fields, and deletion with what it
// stops. The knowledge-base form and the sync wizard link here when no secret of the kind
// they need exists (`vaultLink`), naming the kind, and the way back.

import { ApiError, api, claims, type Secret, type SecretKind } from "../api";
import { clearFieldErrors, confirmDeletion, field, formError, h, loadInto, select, showFieldErrors, type Field } from "../dom";

interface ValueField {
  name: string;
  label: string;
  /** Typed into a password input: it is never shown, not even while typed. */
  secret?: boolean;
  optional?: boolean;
}

interface KindForm {
  title: string;
  hint: string;
  /** The value's fields (`value.<name>`, as the API names a refusal), or "key file": a JSON file pasted whole. */
  value: ValueField[] | "key file";
}

/**
 * Each kind's value, as docproc_common.vault's models take it. Keyed by the API's SecretKind:
 * a kind the API adds fails the build until it has a form here; the console test compares
 * the fields with the models.
 */
const KINDS: Record<SecretKind, KindForm> = {
  api_key: {
    title: "API key",
    hint: "A provider's API key: embeddings with a key (openai, openrouter, ...). The provider names what it is for.",
    value: [{ name: "api_key", label: "API key", secret: true }],
  },
  aws_credentials: {
    title: "AWS credentials",
    hint: "An access key for Amazon S3 sources.",
    value: [
      { name: "access_key_id", label: "Access key id" },
      { name: "secret_access_key", label: "Secret access key", secret: true },
      { name: "session_token", label: "Session token", secret: true, optional: true },
      { name: "region", label: "Region", optional: true },
    ],
  },
  confluence_token: {
    title: "Confluence token",
    hint: "An Atlassian account's email and API token, or a bearer token alone (OAuth 2.0, personal access token).",
    value: [
      { name: "email", label: "Email", optional: true },
      { name: "api_token", label: "API token", secret: true, optional: true },
      { name: "bearer_token", label: "Bearer token", secret: true, optional: true },
    ],
  },
  azure_storage: {
    title: "Azure storage",
    hint: "One of: a connection string, an account name and key, or a SAS token. Where the account is reached is the source's configuration.",
    value: [
      { name: "connection_string", label: "Connection string", secret: true, optional: true },
      { name: "account_name", label: "Account name", optional: true },
      { name: "account_key", label: "Account key", secret: true, optional: true },
      { name: "sas_token", label: "SAS token", secret: true, optional: true },
    ],
  },
  gcp_service_account: {
    title: "Google service account",
    hint: "The JSON key file Google issues for a service account (Google Cloud Storage and Google Drive sources).",
    value: "key file",
  },
  git_token: {
    title: "Git token",
    hint: "A token that can clone the repository (and its user name, where the host wants one).",
    value: [
      { name: "token", label: "Token", secret: true },
      { name: "username", label: "User name", optional: true },
    ],
  },
  llamaparse: {
    title: "LlamaParse key",
    hint: "The key the LlamaParse parser reads documents with.",
    value: [{ name: "api_key", label: "API key", secret: true }],
  },
  ms_graph_app: {
    title: "Microsoft Graph app",
    hint: "An Entra app registration's client credentials (SharePoint sources).",
    value: [
      { name: "tenant_id", label: "Tenant (id or domain)" },
      { name: "client_id", label: "Client id" },
      { name: "client_secret", label: "Client secret", secret: true },
    ],
  },
};

function isKind(value: string | null): value is SecretKind {
  return value !== null && Object.hasOwn(KINDS, value);
}

/**
 * Where a form that needs a secret of `kind` (an api_key of `provider`) sends its user when
 * the vault has none: the vault, that kind chosen, and a way back to the form.
 */
export function vaultLink(kind: string, provider: string | null, text: string): HTMLElement {
  const query = new URLSearchParams({ kind, back: location.hash || "#/" });
  if (provider) query.set("provider", provider);
  return h("p", { class: "hint" }, h("a", { href: `#/vault?${query}`, "data-testid": "vault-link" }, text));
}

export function vaultScreen(main: HTMLElement, _config: unknown, _params: string[], query: URLSearchParams): void {
  const who = claims();
  const list = h("div");
  const back = query.get("back");
  main.append(
    h(
      "section",
      { "aria-labelledby": "vault-title" },
      h("h1", { id: "vault-title" }, "Vault"),
      h(
        "p",
        {},
        "The credentials knowledge bases embed with and sync sources read with. A value is sealed when saved ",
        "and never shown again, here or anywhere: to change one, add a new secret and delete the old.",
        who?.permissions.includes("secrets:view")
          ? ""
          : " Your token does not grant secrets:view: you see only your own secrets.",
      ),
      list,
    ),
    createForm(
      isKind(query.get("kind")) ? (query.get("kind") as SecretKind) : "api_key",
      query.get("provider") ?? "",
      back?.startsWith("#/") ? back : null,
      () => refresh(list),
    ),
  );
  void refresh(list);
}

function refresh(list: HTMLElement): Promise<void> {
  return loadInto(list, "The secrets", () => api<Secret[]>("GET", "/secrets"), (secrets) =>
    secrets.length ? table(secrets, list) : h("p", { class: "empty" }, "No secret yet: add one below."),
  );
}

/** Whether the caller may delete it (the server decides; this only hides a button it would refuse). */
function deletable(secret: Secret): boolean {
  const who = claims();
  if (!who) return false;
  if (secret.owner_id === who.sub) return true;
  return secret.visibility === "org" && who.permissions.includes("secrets:view") && who.permissions.includes("collections:edit");
}

function table(secrets: Secret[], list: HTMLElement): HTMLElement {
  return h(
    "table",
    { "data-testid": "secrets" },
    h("caption", { class: "visually-hidden" }, "Secrets you can see, oldest first"),
    h(
      "thead",
      {},
      h("tr", {}, ...["Name", "Kind", "Provider", "Shared with", "Owner", "Created", ""].map((t) => h("th", { scope: "col" }, t))),
    ),
    h(
      "tbody",
      {},
      secrets.map((secret) =>
        h(
          "tr",
          { "data-secret": secret.name, "data-kind": secret.kind },
          h("td", {}, secret.name),
          h("td", {}, isKind(secret.kind) ? KINDS[secret.kind].title : secret.kind),
          h("td", {}, secret.provider ?? ""),
          h("td", {}, secret.visibility === "org" ? "the organization" : "only its owner"),
          h("td", {}, secret.owner_id),
          h("td", {}, new Date(secret.created_at).toLocaleString()),
          h(
            "td",
            { class: "actions" },
            deletable(secret)
              ? h(
                  "button",
                  { type: "button", class: "danger", "aria-label": `Delete ${secret.name}`, onclick: () => confirmDelete(secret, list) },
                  "Delete",
                )
              : null,
          ),
        ),
      ),
    ),
  );
}

function confirmDelete(secret: Secret, list: HTMLElement): void {
  confirmDeletion(
    secret.name,
    [
      "Its value is gone for good. Knowledge bases and sync sources that use it stop embedding or syncing, ",
      "with a message saying so; nothing falls back to another key.",
    ],
    `/secrets/${secret.id}`,
    () => void refresh(list),
  );
}

interface ValueInputs {
  rows: HTMLElement[];
  /** The value as typed, empty fields left out (the server names a missing one); or the key file's refusal. */
  read(): Record<string, unknown> | ApiError;
}

function valueInputs(kind: SecretKind): ValueInputs {
  const form = KINDS[kind].value;
  if (form === "key file") {
    const file = field(
      "Key file (JSON)",
      "value",
      h("textarea", { rows: 8, spellcheck: "false", autocomplete: "off" }),
      "Paste the whole file as Google issued it.",
    );
    return {
      rows: [file.row],
      read() {
        let parsed: unknown;
        try {
          parsed = JSON.parse(file.input.value);
        } catch {
          parsed = null;
        }
        if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
        return new ApiError(400, "INVALID_INPUT", "The key file is not valid", [
          { field: "value", message: "not a JSON object: paste the key file Google issued" },
        ]);
      },
    };
  }
  const inputs: [ValueField, Field][] = form.map((f) => [
    f,
    field(
      `${f.label}${f.optional ? " (optional)" : ""}`,
      `value.${f.name}`,
      h("input", { type: f.secret ? "password" : "text", autocomplete: "off", spellcheck: "false" }),
    ),
  ]);
  return {
    rows: inputs.map(([, input]) => input.row),
    read() {
      const out: Record<string, unknown> = {};
      for (const [f, input] of inputs) {
        const value = input.input.value.trim();
        if (value) out[f.name] = value;
      }
      return out;
    },
  };
}

function createForm(kind: SecretKind, provider: string, back: string | null, saved: () => Promise<void>): HTMLElement {
  const who = claims();
  const name = field("Name", "name", h("input", { required: true }));
  const kindInput = field(
    "Kind",
    "kind",
    select(Object.entries(KINDS).map(([k, form]) => [k, `${form.title} (${k})`]), kind),
  );
  const kindHint = h("p", { class: "hint" });
  kindInput.row.append(kindHint);
  const providerInput = field(
    "Provider",
    "provider",
    h("input", { value: provider, placeholder: "openai" }),
    "What the key is for: an embedding provider's name (openai, openrouter, ...)",
  );
  const visibilities: [string, string][] = [["private", "Only me"]];
  if (who?.org && who.permissions.includes("secrets:view")) visibilities.push(["org", `The organization (${who.org})`]);
  const visibility = field(
    "Shared with",
    "visibility",
    select(visibilities, "private"),
    "Shared, whoever in the organization holds secrets:view sees it and can use it in a knowledge base or a source (never read its value).",
  );
  // A refusal of the value as a whole ("give one of ...") lands on the fieldset.
  const valueSet = h("fieldset", { id: "secret-value", "data-field": "value", tabindex: "-1", "aria-describedby": "secret-value-error" });
  let value = valueInputs(kind);
  const drawKind = (): void => {
    const chosen = kindInput.input.value as SecretKind;
    kindHint.textContent = KINDS[chosen].hint;
    providerInput.row.hidden = chosen !== "api_key";
    value = valueInputs(chosen);
    valueSet.replaceChildren(
      h("legend", {}, `Value (${KINDS[chosen].title})`),
      h("p", { class: "field-error", id: "secret-value-error", role: "alert", hidden: true }),
      ...value.rows,
    );
  };
  kindInput.input.addEventListener("change", drawKind);
  drawKind();
  const banner = formError();
  const status = h("div", { role: "status" });
  const form = h(
    "form",
    { class: "card", "aria-labelledby": "secret-create-title", novalidate: true, autocomplete: "off" },
    h("h2", { id: "secret-create-title" }, "Add a secret"),
    banner,
    name.row,
    kindInput.row,
    providerInput.row,
    visibility.row,
    valueSet,
    h("button", { type: "submit" }, "Save secret"),
    status,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    status.replaceChildren();
    const typed = value.read();
    if (typed instanceof ApiError) {
      showFieldErrors(form, typed);
      return;
    }
    const chosen = kindInput.input.value as SecretKind;
    const body: Record<string, unknown> = {
      name: name.input.value.trim(),
      kind: chosen,
      value: typed,
      visibility: visibility.input.value,
    };
    if (chosen === "api_key" && providerInput.input.value.trim()) body.provider = providerInput.input.value.trim();
    let created: Secret;
    try {
      created = await api<Secret>("POST", "/secrets", body);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      showFieldErrors(form, error);
      return;
    }
    name.input.value = "";
    drawKind(); // the typed value goes with the inputs it was typed in
    status.replaceChildren(
      h("p", { class: "saved" }, `Saved ${created.name}. Its value is sealed in the vault and is not shown again.`),
      ...(back ? [h("p", {}, h("a", { href: back }, "Back to where you were"))] : []),
    );
    await saved();
  });
  return form;
}
