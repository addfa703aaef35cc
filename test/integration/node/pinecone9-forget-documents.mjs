// Writes and reads a document index with @pinecone-database/pinecone 9.x
// (API version 2026-07, index.documents.*), for the integration test of
// forget on a document index (test/integration/forget_documents_test.go):
//   LETHE_DOCS_STEP=<step> node pinecone9-forget-documents.mjs <host> <api-key>
// Steps: "write" upserts alice's a1, a2 and bob's b1 in namespace notes;
// "before-lethe" upserts alice's a3 (sent straight to the index);
// "read" prints the ids of a1, a2, a3, b1 still present; "again" tries
// to upsert a document of alice and prints the error's name and whether
// its message carries LT003. Prints one JSON line; exit 1 on failure.
import { Pinecone } from '@pinecone-database/pinecone9';

const [host, apiKey] = process.argv.slice(2);
const step = process.env.LETHE_DOCS_STEP;
if (!host || !apiKey || !step) {
  console.error('usage: LETHE_DOCS_STEP=write|before-lethe|read|again node pinecone9-forget-documents.mjs <host> <api-key>');
  process.exit(2);
}
const docs = new Pinecone({ apiKey }).index({ host, namespace: 'notes' }).documents;
const out = {};
switch (step) {
  case 'write':
    out.upserted = (await docs.upsert({
      documents: [
        { _id: 'a1', user_id: 'alice', title: 'Alice on hiking' },
        { _id: 'a2', user_id: 'alice', title: 'Alice on trail shoes', year: 2024 },
        { _id: 'b1', user_id: 'bob', title: 'Bob on sailing' },
      ],
    })).upsertedCount;
    out.patched = (await docs.update({ documents: [{ _id: 'b1', title: 'Bob on sailing, again' }] })).matchedRecords;
    break;
  case 'before-lethe':
    out.upserted = (await docs.upsert({ documents: [{ _id: 'a3', user_id: 'alice', title: 'written before Lethe' }] })).upsertedCount;
    break;
  case 'read':
    out.present = Object.keys((await docs.fetch({ ids: ['a1', 'a2', 'a3', 'b1'] })).documents).sort();
    break;
  case 'again':
    try {
      await docs.upsert({ documents: [{ _id: 'a4', user_id: 'alice', title: 'after the forget' }] });
      out.again = 'accepted';
    } catch (e) {
      out.again = { name: e.name, lt003: /LT003/.test(e.message) };
    }
    break;
  default:
    console.error(`unknown step ${step}`);
    process.exit(2);
}
console.log(JSON.stringify(out));
