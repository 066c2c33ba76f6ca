// A few DOM helpers: elements, labelled inputs, the error envelope shown on them, and a load
// that says why it failed.

import { ApiError, api } from "./api";

type Child = Node | string | null | undefined | false;
type Attrs = Record<string, string | boolean | number | EventListener | undefined>;

/** `h("button", {type: "button", onclick}, "Save")`: an element with attributes and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") el.addEventListener(key.replace(/^on/, ""), value);
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child);
  }
  return el;
}

let fieldIds = 0;

export interface Field {
  /** The wrapper: label, input, hint and the error line. */
  row: HTMLElement;
  input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
}

/**
 * A labelled input whose `data-field` is the dotted path the API names in `details.fields`,
 * so `showFieldErrors` can put each refusal on its input.
 */
export function field(
  label: string,
  name: string,
  input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
  hint?: string,
): Field {
  const id = `f${++fieldIds}`;
  input.id = id;
  input.name = name;
  input.dataset.field = name;
  const error = h("p", { class: "field-error", id: `${id}-error`, role: "alert", hidden: true });
  const described = [hint ? `${id}-hint` : "", `${id}-error`].filter(Boolean).join(" ");
  input.setAttribute("aria-describedby", described);
  const row = h(
    "div",
    { class: "field" },
    h("label", { for: id }, label),
    input,
    hint ? h("p", { class: "hint", id: `${id}-hint` }, hint) : null,
    error,
  );
  return { row, input };
}

export function select(options: [string, string][], value?: string): HTMLSelectElement {
  const el = h("select");
  for (const [v, text] of options) el.append(h("option", { value: v, selected: v === value }, text));
  return el;
}

export function clearFieldErrors(form: HTMLElement): void {
  for (const el of form.querySelectorAll<HTMLElement>(".field-error")) {
    el.hidden = true;
    el.textContent = "";
  }
  for (const el of form.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
  const banner = form.querySelector<HTMLElement>(".form-error");
  if (banner) banner.hidden = true;
}

/**
 * The refusal on the form: each `details.fields` entry under the input whose `data-field`
 * it names (or the nearest enclosing one: `config.bucket` falls back to `config`), the
 * message in the form's banner; focus moves to the first refused input.
 */
export function showFieldErrors(form: HTMLElement, error: ApiError): void {
  clearFieldErrors(form);
  let first: HTMLElement | null = null;
  const unplaced: string[] = [];
  for (const { field: path, message } of error.fields) {
    const input = findInput(form, path);
    if (!input) {
      unplaced.push(`${path}: ${message}`);
      continue;
    }
    input.setAttribute("aria-invalid", "true");
    const line = document.getElementById(`${input.id}-error`);
    if (line) {
      line.textContent = message;
      line.hidden = false;
    }
    first ??= input;
  }
  const banner = form.querySelector<HTMLElement>(".form-error");
  if (banner) {
    banner.textContent = [error.message, ...unplaced].join(" — ");
    banner.hidden = false;
  }
  (first ?? banner)?.focus();
}

function findInput(form: HTMLElement, path: string): HTMLElement | null {
  const parts = path.split(".");
  while (parts.length) {
    const el = form.querySelector<HTMLElement>(`[data-field="${CSS.escape(parts.join("."))}"]`);
    if (el) return el;
    parts.pop();
  }
  return null;
}

export function formError(): HTMLElement {
  return h("p", { class: "form-error", role: "alert", tabindex: "-1", hidden: true });
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * What `load` brings, drawn into `place` (emptied, then given what `draw` returns); or, when
 * it fails, why, said in `place` with a button that tries again (every screen's first load
 * goes through it). `title` heads the failure where the screen's own heading comes with what
 * failed to load.
 */
export async function loadInto<T>(
  place: HTMLElement,
  what: string,
  load: () => Promise<T>,
  draw: (value: T) => Node | Node[],
  title?: string,
): Promise<void> {
  let value: T;
  try {
    value = await load();
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const retrying = place.contains(document.activeElement);
    const retry = h(
      "button",
      { type: "button", class: "secondary", onclick: () => void loadInto(place, what, load, draw, title) },
      "Try again",
    );
    place.replaceChildren(
      ...(title ? [h("h1", {}, title)] : []),
      h("p", { class: "form-error", role: "alert" }, `${what} could not be loaded: ${error.message}`),
      retry,
    );
    if (retrying) retry.focus();
    return;
  }
  place.replaceChildren();
  place.append(...[draw(value)].flat());
}

/**
 * A modal asking to delete `what`, saying what follows (`consequences`): `DELETE path` on
 * confirm, then `done`; a refusal is shown in the dialog, which stays open.
 */
export function confirmDeletion(what: string, consequences: Child[], path: string, done: () => void): void {
  const result = h("p", { role: "status" });
  const dialog = h(
    "dialog",
    { "aria-labelledby": "delete-title" },
    h("h2", { id: "delete-title" }, `Delete ${what}?`),
    h("p", {}, ...consequences),
    result,
    h(
      "div",
      { class: "buttons" },
      h("button", { type: "button", class: "secondary", onclick: () => dialog.close() }, "Cancel"),
      h(
        "button",
        {
          type: "button",
          class: "danger",
          onclick: async () => {
            try {
              await api("DELETE", path);
              dialog.close();
              done();
            } catch (error) {
              if (!(error instanceof ApiError)) throw error;
              result.textContent = error.message;
            }
          },
        },
        "Delete",
      ),
    ),
  );
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}
