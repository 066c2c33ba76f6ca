// The ingestion settings a knowledge base reads its uploads with (IngestionConfig), as inputs
// named `ingestion_config.<setting>` so a refusal lands on its input.

import { field, h, select } from "./dom";

const PARSERS: [string, string][] = [
  ["pymupdf", "PyMuPDF (text layer)"],
  ["liteparse", "LiteParse (OCR)"],
  ["llamaparse", "LlamaParse (a vault key)"],
];
const STRATEGIES: [string, string][] = [
  ["recursive", "Recursive"],
  ["markdown", "Markdown headings"],
  ["fixed", "Fixed size"],
];

export interface IngestionInputs {
  fieldset: HTMLFieldSetElement;
  /** The settings as typed (numbers as numbers); `changedFrom` keeps only those that differ. */
  values(changedFrom?: Record<string, unknown>): Record<string, unknown>;
}

export function ingestionInputs(current: Record<string, unknown> = {}): IngestionInputs {
  const parser = field("Parser", "ingestion_config.parser", select(PARSERS, String(current.parser ?? "pymupdf")));
  const size = field(
    "Chunk size (characters)",
    "ingestion_config.chunk_size",
    h("input", { type: "number", value: String(current.chunk_size ?? 2500) }),
  );
  const overlap = field(
    "Chunk overlap (characters)",
    "ingestion_config.chunk_overlap",
    h("input", { type: "number", value: String(current.chunk_overlap ?? 200) }),
    "Smaller than the chunk size",
  );
  const strategy = field(
    "Chunking strategy",
    "ingestion_config.chunking_strategy",
    select(STRATEGIES, String(current.chunking_strategy ?? "recursive")),
  );
  // A refusal of the settings together (chunk_overlap against chunk_size) lands on the fieldset.
  const fieldset = h(
    "fieldset",
    { id: "ingestion-config", "data-field": "ingestion_config", tabindex: "-1", "aria-describedby": "ingestion-config-error" },
    h("legend", {}, "Ingestion"),
    h("p", { class: "field-error", id: "ingestion-config-error", role: "alert", hidden: true }),
    parser.row,
    size.row,
    overlap.row,
    strategy.row,
  );
  const read = (): Record<string, unknown> => ({
    parser: parser.input.value,
    chunk_size: numberOrText(size.input.value),
    chunk_overlap: numberOrText(overlap.input.value),
    chunking_strategy: strategy.input.value,
  });
  return {
    fieldset,
    values(changedFrom) {
      const all = read();
      if (!changedFrom) return all;
      return Object.fromEntries(Object.entries(all).filter(([k, v]) => changedFrom[k] !== v));
    },
  };
}

/** A number input's value as a number; anything else as typed, for the server to refuse by name. */
export function numberOrText(value: string): number | string {
  return value.trim() !== "" && Number.isFinite(Number(value)) ? Number(value) : value;
}
