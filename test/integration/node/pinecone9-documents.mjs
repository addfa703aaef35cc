// Drives @pinecone-database/pinecone 9.x's documents API (API version
// 2026-07, index.documents.*) against a Pinecone data plane:
//   node pinecone9-documents.mjs <host> <api-key>
// Prints one JSON report of what each call returned; the Go test
// (test/pinecone/emulator/sdk_node_test.go, sdktest.NodeDocumentsReport)
// checks it. Exit 1 on failure.
import { Pinecone } from '@pinecone-database/pinecone9';

const [host, apiKey] = process.argv.slice(2);
if (!host || !apiKey) {
  console.error('usage: node pinecone9-documents.mjs <host> <api-key>');
  process.exit(2);
}

const pc = new Pinecone({ apiKey });
const docs = pc.index({ host, namespace: 'docs' }).documents;
const byDefault = pc.index({ host }).documents; // the SDK sends __default__
const report = {};
const sorted = (o) => Object.keys(o ?? {}).sort();

report.upserted = (await docs.upsert({
  documents: [
    { _id: 'a1', title: 'Alice on hiking', user_id: 'alice', year: 2024, embedding: [1, 0, 0] },
    { _id: 'a2', title: 'Alice on trail shoes', user_id: 'alice', year: 2020, embedding: [0.8, 0.2, 0] },
    { _id: 'b1', title: 'Bob on sailing', user_id: 'bob', year: 2023, tags: ['sea', 'wind'], embedding: [0, 1, 0] },
  ],
})).upsertedCount;
await byDefault.upsert({ documents: [{ _id: 'd1', title: 'default namespace', user_id: 'erin' }] });

let fetched = await docs.fetch({ ids: ['a1', 'b1', 'missing'] });
report.fetchIds = sorted(fetched.documents);
report.fetchB1 = fetched.documents.b1;
report.fetchNamespace = fetched.namespace;
report.fetchDefault = sorted((await byDefault.fetch({ ids: ['d1'] })).documents);

const page1 = await docs.fetch({ filter: { user_id: { $eq: 'alice' } }, limit: 1, includeFields: ['user_id'] });
const page2 = await docs.fetch({ filter: { user_id: { $eq: 'alice' } }, limit: 1, includeFields: ['user_id'], paginationToken: page1.pagination.next });
report.fetchByFilterPages = [page1.documents, page2.documents, page2.pagination?.next ?? null];

const list1 = await docs.list({ limit: 2 });
const list2 = await docs.list({ limit: 2, paginationToken: list1.pagination.next });
report.listPages = [list1.documents.map((d) => d._id), list2.documents.map((d) => d._id), list2.pagination?.next ?? null];
report.listPrefix = (await docs.list({ prefix: 'a' })).documents.map((d) => d._id);

const text = await docs.search({ scoreBy: [{ type: 'text', fields: ['title'], query: 'alice hiking' }], topK: 2, includeFields: ['title'] });
report.searchText = text.matches.map((m) => [m._id, m._score, m.title]);
const dense = await docs.search({
  scoreBy: [{ type: 'dense_vector', field: 'embedding', values: [1, 0, 0] }],
  topK: 3,
  filter: { year: { $gt: 2021 } },
});
report.searchDense = dense.matches.map((m) => m._id);

report.updateById = (await docs.update({ documents: [{ _id: 'a2', user_id: 'carol', _remove_fields: ['year'] }, { _id: 'never-existed', user_id: 'x' }] })).matchedRecords;
report.updatedA2 = (await docs.fetch({ ids: ['a2'] })).documents.a2;
report.updateByFilter = (await docs.update({ filter: { user_id: { $eq: 'bob' } }, setFields: { reviewed: true } })).matchedRecords;
report.updatedB1Reviewed = (await docs.fetch({ ids: ['b1'], includeFields: ['reviewed'] })).documents.b1;

report.deleteIds = (await docs.delete({ ids: ['a1', 'never-existed'] })).matchedRecords;
report.deleteFilter = (await docs.delete({ filter: { user_id: { $eq: 'carol' } } })).matchedRecords;
report.afterDeletes = sorted((await docs.fetch({ ids: ['a1', 'a2', 'b1'] })).documents);
report.deleteAll = (await docs.delete({ deleteAll: true })).matchedRecords;
report.afterDeleteAll = (await docs.list()).documents.length;

try {
  await docs.upsert({ documents: [{ _id: 'bad', _secret: 'x', title: 't' }] });
  report.reservedField = 'accepted';
} catch (e) {
  report.reservedField = { name: e.name, reservedMessage: /reserved/.test(e.message) };
}
try {
  await pc.index({ host, namespace: 'docs' }).documents.fetch({ ids: ['a1'] });
  await new Pinecone({ apiKey: 'wrong-key' }).index({ host, namespace: 'docs' }).documents.fetch({ ids: ['a1'] });
  report.wrongKey = 'accepted';
} catch (e) {
  report.wrongKey = e.name;
}

console.log(JSON.stringify(report));
