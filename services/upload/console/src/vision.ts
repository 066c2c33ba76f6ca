// Image description in a knowledge base's settings (#image-description): on or off, and the
// organization's vision model profile it describes with (`ingestion_config.vision_profile_id`).
// A profile — a provider, a model and its key — is made without leaving the settings: the
// dialog takes a key already in the vault or a new one, saved to the vault first. Deleting a
// profile is not offered here (the API refuses one a collection selects).

import { ApiError, api, claims, type Secret, type VisionProfile, type VisionProfileCreate } from "./api";
import { clearFieldErrors, field, formError, h, select, showFieldErrors } from "./dom";

const PROVIDERS: [string, string][] = [
  ["openai", "OpenAI"],
  ["openrouter", "OpenRouter"],
  ["openai-compatible", "OpenAI-compatible server (this deployment allows)"],
];
const NEW_KEY = "new";

export interface VisionInputs {
  fieldset: HTMLFieldSetElement;
  /** `image_description` and `vision_profile_id` as chosen; `changedFrom` keeps what differs. */
  values(changedFrom?: Record<string, unknown>): Record<string, unknown>;
}

export function visionInputs(current: Record<string, unknown> = {}): VisionInputs {
  const describe = h("input", { type: "checkbox", checked: current.image_description === true });
  const describeRow = h(
    "div",
    { class: "field" },
    h("label", {}, describe, " Describe images (PyMuPDF: embedded images, described once each)"),
  );
  describe.id = "image-description";
  describe.name = describe.dataset.field = "ingestion_config.image_description";
  const chosen = String(current.vision_profile_id ?? "");
  const profiles = field(
    "Vision model profile",
    "ingestion_config.vision_profile_id",
    select([["", "Loading profiles…"]], chosen),
    "A provider, a model that reads images and its key, shared by the organization.",
  );
  const status = h("p", { role: "status" });
  const fill = async (selected: string): Promise<void> => {
    const list = await api<VisionProfile[]>("GET", "/vision-profiles");
    const options: [string, string][] = [
      ["", list.length ? "None" : "None yet: make one below"],
      ...list.map((p): [string, string] => [p.id, `${p.name} · ${p.provider} · ${p.model}`]),
    ];
    profiles.input.replaceChildren(...select(options, selected).children);
    profiles.input.value = selected;
  };
  void fill(chosen).catch((error: unknown) => {
    if (!(error instanceof ApiError)) throw error;
    status.textContent = `The vision model profiles could not be loaded: ${error.message}`;
  });
  const inline = current.vision_profile
    ? h("p", { class: "hint" }, "This base names its vision endpoint inline (through the API); choosing a profile replaces it.")
    : null;
  const fieldset = h(
    "fieldset",
    { id: "image-description-settings", "data-testid": "image-description" },
    h("legend", {}, "Image description"),
    describeRow,
    profiles.row,
    inline,
    h(
      "button",
      {
        type: "button",
        class: "secondary",
        onclick: () =>
          profileDialog(async (made) => {
            await fill(made.id);
            describe.checked = true;
            status.textContent = `Made ${made.name}; save the settings to use it.`;
            profiles.input.focus();
          }),
      },
      "New vision profile…",
    ),
    status,
  );
  const read = (): Record<string, unknown> => ({
    image_description: describe.checked,
    vision_profile_id: profiles.input.value || null,
  });
  return {
    fieldset,
    values(changedFrom) {
      const all = read();
      if (!changedFrom) return all;
      const before: Record<string, unknown> = {
        image_description: changedFrom.image_description ?? false,
        vision_profile_id: changedFrom.vision_profile_id ?? null,
      };
      return Object.fromEntries(Object.entries(all).filter(([k, v]) => before[k] !== v));
    },
  };
}

/** The dialog that makes a profile (and, when asked, its key in the vault); `made` on success. */
function profileDialog(made: (profile: VisionProfile) => Promise<void>): void {
  const banner = formError();
  const name = field("Profile name", "name", h("input", { type: "text", required: true }));
  const provider = field("Provider", "provider", select(PROVIDERS, "openai"));
  const model = field("Model", "model", h("input", { type: "text", required: true, placeholder: "gpt-4o-mini" }), "A model that reads images.");
  const address = field(
    "Server address",
    "base_url",
    h("input", { type: "url", placeholder: "http://vision.internal:8000/v1" }),
    "Its OpenAI-compatible root; the deployment must allow it.",
  );
  const key = field("Key from the vault", "secret_id", select([["", "Loading keys…"]]));
  const newKey = field("New API key", "value.api_key", h("input", { type: "password", autocomplete: "off" }), "Saved to the vault; never shown again.");
  let keys: Secret[] = [];
  let savedKey: string | null = null; // a key saved on a try whose profile was refused
  const sync = (): void => {
    const p = provider.input.value;
    address.row.hidden = p !== "openai-compatible";
    const mine = keys.filter((s) => s.provider === p);
    const options: [string, string][] = [
      ...mine.map((s): [string, string] => [s.id, s.name]),
      [NEW_KEY, "A new key…"],
    ];
    if (p === "openai-compatible") options.unshift(["", "No key (a server inside the deployment)"]);
    const keep = key.input.value;
    key.input.replaceChildren(...select(options).children);
    key.input.value = options.some(([v]) => v === keep) ? keep : options[0][0];
    newKey.row.hidden = key.input.value !== NEW_KEY;
  };
  provider.input.addEventListener("change", sync);
  key.input.addEventListener("change", sync);
  void api<Secret[]>("GET", "/secrets?kind=api_key").then(
    (list) => {
      keys = list;
      sync();
    },
    (error: unknown) => {
      if (!(error instanceof ApiError)) throw error;
      keys = [];
      sync();
    },
  );
  const form = h(
    "form",
    { novalidate: true },
    h("h2", { id: "vision-profile-title" }, "New vision model profile"),
    banner,
    name.row,
    provider.row,
    model.row,
    address.row,
    key.row,
    newKey.row,
    h(
      "div",
      { class: "buttons" },
      h("button", { type: "button", class: "secondary", onclick: () => dialog.close() }, "Cancel"),
      h("button", { type: "submit" }, "Make profile"),
    ),
  );
  const dialog = h("dialog", { "aria-labelledby": "vision-profile-title" }, form);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    const p = provider.input.value;
    try {
      let secretId: string | null = key.input.value || null;
      if (secretId === NEW_KEY) {
        if (savedKey === null) {
          const who = claims();
          const shared = who?.org && who.permissions.includes("secrets:view");
          const secret = await api<Secret>("POST", "/secrets", {
            name: `${name.input.value || p} vision key`,
            kind: "api_key",
            provider: p,
            value: { api_key: newKey.input.value },
            visibility: shared ? "org" : "private",
          });
          savedKey = secret.id;
          newKey.input.value = "";
        }
        secretId = savedKey;
      }
      const body: VisionProfileCreate = {
        name: name.input.value,
        provider: p as VisionProfileCreate["provider"],
        model: model.input.value,
        base_url: p === "openai-compatible" ? address.input.value || null : null,
        secret_id: secretId,
      };
      const profile = await api<VisionProfile>("POST", "/vision-profiles", body);
      dialog.close();
      await made(profile);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      showFieldErrors(form, error);
    }
  });
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  sync();
  name.input.focus();
}
