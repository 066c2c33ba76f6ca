// @docproc/client against a running docproc, under Node's own test runner:
//   DOCPROC_URL=... DOCPROC_TOKEN=... DOCPROC_OTHER_TOKEN=... node --test test/client.test.mjs
// DOCPROC_TOKEN reads and edits bases of one organisation, DOCPROC_OTHER_TOKEN is a user of
// another. In CI, tests/clients/test_published.py starts `docproc dev`, installs the
// package from the tarball `npm pack` builds, and runs this file against it.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { before, test } from "node:test";
import { Docproc, DocprocError, cite } from "@docproc/client";

const { DOCPROC_URL, DOCPROC_TOKEN, DOCPROC_OTHER_TOKEN } = process.env;
const alice = new Docproc({ baseUrl: DOCPROC_URL, token: DOCPROC_TOKEN });
const bob = new Docproc({ baseUrl: DOCPROC_URL, token: DOCPROC_OTHER_TOKEN });
const NOTE = "# Tides\n\nHow the harbour floods.\n\n## Spring tides\n\nThe spring tide floods the lower quay twice a month.\n";
const SMALL_CHUNKS = { chunk_size: 60, chunk_overlap: 0 };

let base;
const uploaded = {};

before(async () => {
  const suffix = randomUUID().slice(0, 8);
  base = await alice.createKnowledgeBase({
    name: `TS handbook ${suffix}`,
    collection_name: `ts_${suffix}`,
    scope: "org",
    embedding_provider: "local",
    embedding_model: "sentence-transformers/all-MiniLM-L6-v2",
  });
  const files = [
    ["tides.md", await alice.uploadText(base.id, NOTE, "tides.md", { ingestion: SMALL_CHUNKS })],
    ["quay.txt", await alice.upload(base.id, new Blob(["The quay lamps are lit at dusk."]), "quay.txt")],
    ["crew.txt", await alice.uploadText(base.id, "The crew of the pilot boat is four.", "crew.txt")],
  ];
  for (const [name, answer] of files) uploaded[name] = answer.tracking_id;
  const status = await alice.waitIndexed(base.id, { timeoutMs: 240_000 });
  assert.deepEqual([status.indexed_count, status.failed_count], [3, 0]);
});

test("the documents are listed page by page", async () => {
  const names = [];
  for await (const doc of alice.documents(base.id, { pageSize: 1 })) names.push(doc.filename);
  assert.deepEqual(names.sort(), ["crew.txt", "quay.txt", "tides.md"]);
});

test("a hit is cited by its headings and its links read it", async () => {
  const [hit] = await alice.search("when does the spring tide flood the quay?", {
    knowledgeBaseIds: [base.id],
    topK: 1,
  });
  assert.equal(hit.filename, "tides.md");
  assert.equal(hit.document_id, uploaded["tides.md"]);
  assert.deepEqual(hit.heading_path, ["Tides", "Spring tides"]);
  assert.equal(hit.page_start, null);
  assert.equal(cite(hit), "tides.md, Tides > Spring tides");
  assert.match(hit.links.parsed, new RegExp(`^/api/v1/kb/${base.id}/documents/${hit.document_id}/parsed`));

  const around = await alice.chunkContext(hit.document_id, hit.chunk_no, { before: 1, after: 0 });
  assert.deepEqual(around.chunks.map((c) => c.chunk_no), [hit.chunk_no - 1, hit.chunk_no]);
  const original = new TextDecoder().decode(await alice.download(base.id, hit.document_id));
  assert.equal(original, NOTE);

  const byCollection = await alice.search("pilot boat crew", { collections: [base.collection_name], mode: "keyword" });
  assert.equal(byCollection[0].filename, "crew.txt");
});

test("refusals throw the envelope", async () => {
  await assert.rejects(alice.createKnowledgeBase({ name: "Bad", ingestion_config: { chunk_size: -1 } }), (error) => {
    assert.ok(error instanceof DocprocError);
    assert.equal(error.status, 422);
    assert.deepEqual(Object.keys(error.fields), ["ingestion_config.chunk_size"]);
    return true;
  });
  // another organisation's base is absent to bob
  for (const call of [
    () => bob.ingestion(base.id),
    () => bob.search("quay", { knowledgeBaseIds: [base.id] }),
    () => bob.uploadText(base.id, "an intruder's note", "intruder.md"),
  ]) {
    await assert.rejects(call(), (error) => {
      assert.ok(error instanceof DocprocError);
      assert.deepEqual([error.status, error.reason], [404, "Collection not found"]);
      return true;
    });
  }
});
