// A connector's configuration form drawn from its CONFIG_MODEL's JSON schema: one labelled
// input per property, named `config.<property>` as the API names a refusal.

import { field, h, select, type Field } from "./dom";
import { numberOrText } from "./ingestion";

/** The JSON Schema vocabulary a connector's `config_schema` (pydantic's) is drawn with. */
export interface JsonSchema {
  type?: string;
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
}

interface Property {
  name: string;
  schema: JsonSchema;
  nullable: boolean;
  required: boolean;
  field: Field;
}

export interface SchemaForm {
  fieldset: HTMLFieldSetElement;
  /** What was filled in; empty inputs are left out so the model's defaults apply. */
  values(): Record<string, unknown>;
}

/** `anyOf: [X, {type: null}]` is X, nullable. */
function unwrap(schema: JsonSchema): { schema: JsonSchema; nullable: boolean } {
  const options = schema.anyOf?.filter((s) => s.type !== "null");
  if (schema.anyOf && options?.length === 1) return { schema: { ...schema, ...options[0], anyOf: undefined }, nullable: true };
  return { schema, nullable: false };
}

function input(schema: JsonSchema): HTMLInputElement | HTMLSelectElement {
  if (schema.enum) return select(schema.enum.map((v) => [String(v), String(v)]), String(schema.default ?? ""));
  if (schema.type === "boolean") return h("input", { type: "checkbox", checked: schema.default === true });
  if (schema.type === "integer" || schema.type === "number") {
    return h("input", {
      type: "number",
      step: schema.type === "number" ? "any" : "1",
      placeholder: schema.default !== undefined && schema.default !== null ? String(schema.default) : undefined,
    });
  }
  const placeholder = Array.isArray(schema.default) ? schema.default.join(", ") : schema.default;
  return h("input", { type: "text", placeholder: placeholder ? String(placeholder) : undefined });
}

export function schemaForm(schema: JsonSchema, legend: string): SchemaForm {
  const required = new Set(schema.required ?? []);
  const properties: Property[] = Object.entries(schema.properties ?? {}).map(([name, raw]) => {
    const { schema: prop, nullable } = unwrap(raw);
    const el = input(prop);
    if (required.has(name)) el.setAttribute("aria-required", "true");
    const hint = [prop.description, prop.type === "array" ? "Comma-separated" : ""].filter(Boolean).join(". ");
    const label = `${prop.title ?? raw.title ?? name}${required.has(name) ? " (required)" : ""}`;
    return { name, schema: prop, nullable, required: required.has(name), field: field(label, `config.${name}`, el, hint || undefined) };
  });
  const fieldset = h("fieldset", {}, h("legend", {}, legend), ...properties.map((p) => p.field.row));
  return {
    fieldset,
    values() {
      const out: Record<string, unknown> = {};
      for (const p of properties) {
        const el = p.field.input as HTMLInputElement;
        if (p.schema.type === "boolean") {
          if (el.checked !== (p.schema.default === true)) out[p.name] = el.checked;
          continue;
        }
        const raw = el.value.trim();
        if (raw === "") continue;
        if (p.schema.type === "integer" || p.schema.type === "number") out[p.name] = numberOrText(raw);
        else if (p.schema.type === "array") out[p.name] = raw.split(",").map((s) => s.trim()).filter(Boolean);
        else out[p.name] = raw;
      }
      return out;
    },
  };
}
