// The console's shell: sign-in gate, navigation, and a hash router over the screens.

import "./style.css";
import { claims, consoleConfig, token, type ConsoleConfig } from "./api";
import { h, loadInto } from "./dom";
import { installDropzone } from "./dropzone";
import { basesScreen } from "./screens/bases";
import { chatScreen } from "./screens/chat";
import { documentsScreen } from "./screens/documents";
import { settingsScreen } from "./screens/settings";
import { signInScreen, signOut } from "./screens/signin";
import { syncScreen } from "./screens/sync";
import { vaultScreen } from "./screens/vault";

/**
 * A screen draws into `main` and returns what stops it (polling, its drop target). `params`
 * are its path's, `query` what follows a `?` in the hash (`#/vault?kind=api_key`).
 */
export type Screen = (
  main: HTMLElement,
  config: ConsoleConfig,
  params: string[],
  query: URLSearchParams,
) => (() => void) | void;

const ROUTES: [RegExp, Screen, string][] = [
  [/^\/$/, basesScreen, "Knowledge bases"],
  [/^\/kb\/([0-9a-f-]{36})$/, documentsScreen, "Documents"],
  [/^\/kb\/([0-9a-f-]{36})\/settings$/, settingsScreen, "Settings"],
  [/^\/kb\/([0-9a-f-]{36})\/sync$/, syncScreen, "Sync sources"],
  [/^\/vault$/, vaultScreen, "Vault"],
  [/^\/chat$/, chatScreen, "Try a chat upload"],
];

let stop: (() => void) | void;

function navigation(): HTMLElement {
  const who = claims();
  return h(
    "header",
    { class: "top" },
    h("a", { class: "brand", href: "#/" }, "docproc"),
    h(
      "nav",
      { "aria-label": "Main" },
      h("a", { href: "#/" }, "Knowledge bases"),
      h("a", { href: "#/vault" }, "Vault"),
      h("a", { href: "#/chat" }, "Try a chat upload"),
    ),
    who
      ? h(
          "div",
          { class: "who" },
          h("span", {}, who.org ? `${who.sub} · ${who.org}` : who.sub),
          h("button", { type: "button", class: "secondary", onclick: () => signOut() }, "Sign out"),
        )
      : null,
  );
}

function route(config: ConsoleConfig): void {
  stop?.();
  stop = undefined;
  const app = document.getElementById("app")!;
  const main = h("main", { id: "main", tabindex: "-1" });
  const [path = "", query = ""] = location.hash.replace(/^#/, "").split("?", 2);
  if (!token()) {
    app.replaceChildren(navigation(), main);
    document.title = "Sign in · docproc";
    stop = signInScreen(main, config);
    return;
  }
  app.replaceChildren(navigation(), main);
  for (const [pattern, screen, title] of ROUTES) {
    const match = pattern.exec(path || "/");
    if (match) {
      document.title = `${title} · docproc`;
      stop = screen(main, config, match.slice(1), new URLSearchParams(query));
      return;
    }
  }
  main.append(h("h1", {}, "Not found"), h("p", {}, h("a", { href: "#/" }, "Back to the knowledge bases")));
}

function start(config: ConsoleConfig): Node[] {
  window.addEventListener("hashchange", () => route(config));
  window.addEventListener("docproc:signed-out", () => route(config));
  window.addEventListener("docproc:signed-in", () => route(config));
  route(config); // it draws #app itself, again on each navigation
  return [];
}

installDropzone();
void loadInto(document.getElementById("app")!, "The console's settings", consoleConfig, start, "docproc");
