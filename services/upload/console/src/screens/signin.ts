// Sign-in: in `docproc dev` a form that mints a development token; elsewhere the gateway's
// token pasted in (the console sends it as the bearer token, as any client does).

import { ApiError, mintDevToken, setToken, type ConsoleConfig } from "../api";
import { field, formError, h, showFieldErrors } from "../dom";

export function signOut(): void {
  setToken(null);
  window.dispatchEvent(new Event("docproc:signed-out"));
}

function signedIn(value: string): void {
  setToken(value);
  window.dispatchEvent(new Event("docproc:signed-in"));
}

export function signInScreen(main: HTMLElement, config: ConsoleConfig): void {
  main.append(h("h1", {}, "Sign in"));
  if (config.dev_sign_in) {
    const user = field("User id", "user_id", h("input", { required: true, value: "dev", autocomplete: "username" }));
    const org = field(
      "Organization",
      "organization_id",
      h("input", { value: "acme" }),
      "Empty for a user outside any organization",
    );
    const admin = h("input", { type: "checkbox", id: "app-admin" });
    const banner = formError();
    const form = h(
      "form",
      { class: "card", "aria-labelledby": "dev-title" },
      h("h2", { id: "dev-title" }, "Development sign-in"),
      h(
        "p",
        {},
        "docproc dev mints a token with collections:view, collections:edit and secrets:view. ",
        "A deployment signs people in at its gateway instead.",
      ),
      banner,
      user.row,
      org.row,
      h("div", { class: "check" }, admin, h("label", { for: "app-admin" }, "App admin")),
      h("button", { type: "submit" }, "Sign in"),
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        signedIn(await mintDevToken(user.input.value.trim(), org.input.value.trim(), admin.checked));
      } catch (error) {
        if (error instanceof ApiError) showFieldErrors(form, error);
        else throw error;
      }
    });
    main.append(form);
    user.input.focus();
    return;
  }
  const pasted = field(
    "Bearer token",
    "token",
    h("textarea", { required: true, rows: 4, spellcheck: "false" }),
    "The JWT your gateway issued; it stays in this tab only.",
  );
  const form = h(
    "form",
    { class: "card" },
    pasted.row,
    h("button", { type: "submit" }, "Use this token"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    signedIn(pasted.input.value.trim());
  });
  main.append(form);
}
