// The whole page is the drop target (seed: "the-whole-page-is-the-drop-target").
//
// One set of listeners on the window: while files are dragged over the page an overlay,
// mounted on <body>, shows the per-file size limit. A drag that carries no files (selected
// text, a link) is left alone, not even prevented. While the current screen takes no
// uploads the overlay does not appear and a drop is refused (never opened by the browser).

import { h } from "./dom";

export interface DropTarget {
  /** Whether the screen takes files now. */
  enabled(): boolean;
  /** The per-file limit shown on the overlay, in MB. */
  limitMb: number;
  /** What the files go into, said on the overlay ("Drop files to add them to handbook"). */
  label: string;
  accept(files: File[]): void;
}

let target: DropTarget | null = null;
let depth = 0;
const overlay = h(
  "div",
  { class: "drop-overlay", hidden: true, "data-testid": "drop-overlay", "aria-hidden": "true" },
  h("div", { class: "drop-card" }, h("p", { class: "drop-title" }), h("p", { class: "drop-limit" })),
);

export function setDropTarget(next: DropTarget | null): void {
  target = next;
  hide();
}

function carriesFiles(event: DragEvent): boolean {
  return Array.from(event.dataTransfer?.types ?? []).includes("Files");
}

function show(t: DropTarget): void {
  overlay.querySelector(".drop-title")!.textContent = t.label;
  overlay.querySelector(".drop-limit")!.textContent = `Up to ${t.limitMb} MB per file`;
  overlay.hidden = false;
}

function hide(): void {
  depth = 0;
  overlay.hidden = true;
}

export function installDropzone(): void {
  document.body.append(overlay);
  window.addEventListener("dragenter", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    depth += 1;
    if (target?.enabled()) show(target);
  });
  window.addEventListener("dragover", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    if (event.dataTransfer) event.dataTransfer.dropEffect = target?.enabled() ? "copy" : "none";
  });
  window.addEventListener("dragleave", (event) => {
    if (!carriesFiles(event)) return;
    depth = Math.max(0, depth - 1);
    if (depth === 0) hide();
  });
  window.addEventListener("drop", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    hide();
    const files = Array.from(event.dataTransfer?.files ?? []);
    if (files.length && target?.enabled()) target.accept(files);
  });
}

/** More than this many characters pasted into a text field is a file (seed: "a-long-paste-is-a-file"). */
export const LONG_PASTE_CHARS = 2000;

export function pastedFilename(now = new Date()): string {
  const stamp = now.toISOString().slice(0, 19).replace(/:/g, "-");
  return `pasted-${stamp}.txt`;
}

/**
 * A paste of more than 2,000 characters into `field` is handed to `accept` as
 * `pasted-<date>.txt` (text/plain) instead of being inserted; the field keeps what it had.
 * A shorter paste lands in the field as usual.
 */
export function onLongPaste(
  field: HTMLInputElement | HTMLTextAreaElement,
  enabled: () => boolean,
  accept: (file: File) => void,
): void {
  field.addEventListener("paste", (event: Event) => {
    const text = (event as ClipboardEvent).clipboardData?.getData("text/plain") ?? "";
    if (text.length <= LONG_PASTE_CHARS || !enabled()) return;
    event.preventDefault();
    accept(new File([text], pastedFilename(), { type: "text/plain" }));
  });
}
