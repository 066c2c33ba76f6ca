// "Try a chat upload": the chat pipeline's attachment cards (name, excerpt, type, size) for
// files dropped anywhere, chosen, or pasted long into the composer.

import { ApiError, api, type ChatFile, type ConsoleConfig } from "../api";
import { field, formatBytes, h } from "../dom";
import { onLongPaste, setDropTarget } from "../dropzone";

/** The specification's type, and the finer kind where it says more (a TIFF image, an archive). */
function kindOf(file: ChatFile): string {
  return file.file_kind === file.file_type ? file.file_type : `${file.file_type} (${file.file_kind})`;
}

export function chatScreen(main: HTMLElement, config: ConsoleConfig): () => void {
  const cards = h("ul", { class: "cards", "aria-label": "Attachments", "data-testid": "attachments" });
  const upload = async (file: File): Promise<void> => {
    const card = h("li", { class: "attachment", "data-file": file.name }, h("p", { class: "att-name" }, file.name), h("p", { class: "att-meta" }, "uploading…"));
    cards.append(card);
    const form = new FormData();
    form.append("file", file, file.name);
    try {
      const out = await api<ChatFile>("POST", "/files/upload", form);
      card.replaceChildren(
        h("p", { class: "att-name" }, out.filename),
        h("p", { class: "att-meta" }, `${kindOf(out)} · ${out.mime_type} · ${formatBytes(out.size)}`),
        out.preview ? h("pre", { class: "att-preview" }, out.preview) : h("p", { class: "att-preview none" }, "No text preview"),
      );
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      card.classList.add("refused");
      card.setAttribute("role", "alert");
      card.querySelector(".att-meta")!.textContent = `refused: ${error.message}`;
    }
  };
  const accept = (files: File[]): void => files.forEach((f) => void upload(f));
  const chooser = h("input", { type: "file", multiple: true });
  chooser.addEventListener("change", () => {
    accept(Array.from(chooser.files ?? []));
    chooser.value = "";
  });
  const composer = field(
    "Message",
    "message",
    h("textarea", { rows: 4, placeholder: "Ask about the attachments…" }),
    "Pasting more than 2,000 characters attaches them as pasted-<date>.txt instead.",
  );
  onLongPaste(composer.input as HTMLTextAreaElement, () => true, (file) => accept([file]));
  setDropTarget({
    enabled: () => true,
    limitMb: config.chat_max_upload_size_mb,
    label: "Drop files to attach them",
    accept,
  });
  main.append(
    h("h1", {}, "Try a chat upload"),
    h(
      "p",
      {},
      `Files go through the chat attachment pipeline (up to ${config.chat_max_upload_size_mb} MB each) and are not sent anywhere: `,
      "this page shows the cards a chat client draws from the answer.",
    ),
    h("section", { class: "card" }, h("div", { class: "field" }, h("label", { for: "chat-files" }, "Attach files"), Object.assign(chooser, { id: "chat-files" })), composer.row),
    cards,
  );
  return () => setDropTarget(null);
}
