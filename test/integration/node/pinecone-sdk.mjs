// Drives @pinecone-database/pinecone (REST) against a Pinecone data plane:
//   node pinecone-sdk.mjs <host> <api-key>
// Prints one JSON report of what each call returned; the Go test
// (test/pinecone/emulator/sdk_node_test.go) checks it. Exit 1 on failure.
import { Pinecone } from '@pinecone-database/pinecone';

const [host, apiKey] = process.argv.slice(2);
if (!host || !apiKey) {
  console.error('usage: node pinecone-sdk.mjs <host> <api-key>');
  process.exit(2);
}

// upsertRecords in this SDK resolves the host through the control plane
// (describeIndex) even when index() was given one, so the emulator serves
// that call too.
const pc = new Pinecone({ apiKey, controllerHostUrl: host });
const index = pc.index('emulated', host);
const ns = index.namespace('node');
const report = {};

const sorted = (o) => Object.keys(o ?? {}).sort();

await ns.upsert([
  { id: 'n1', values: [1, 0, 0], metadata: { subject: 'alice', year: 2020 } },
  { id: 'n2', values: [0.8, 0.2, 0], metadata: { subject: 'bob', year: 2023 } },
  { id: 'n3', values: [0, 1, 0], metadata: { subject: 'alice', year: 2024, tags: ['x', 'y'] } },
]);
await ns.upsertRecords([
  { _id: 'r1', chunk_text: 'first record', subject: 'carol' },
  { id: 'r2', chunk_text: 'second record', subject: 'dave' },
]);
// The default namespace: the SDK sends an empty path segment.
await index.upsertRecords([{ _id: 'd1', chunk_text: 'default namespace', subject: 'erin' }]);

let fetched = await ns.fetch(['n1', 'r1', 'r2', 'missing']);
report.fetchIds = sorted(fetched.records);
report.fetchN1 = fetched.records.n1;
report.fetchR2 = fetched.records.r2;
report.fetchDefault = sorted((await index.fetch(['d1'])).records);

const q = await ns.query({
  vector: [1, 0, 0],
  topK: 2,
  includeMetadata: true,
  filter: { $and: [{ year: { $gt: 2021 } }, { subject: { $in: ['alice', 'bob'] } }] },
});
report.queryIds = q.matches.map((m) => m.id);
report.queryTopSubject = q.matches[0].metadata.subject;
report.queryTopScore = q.matches[0].score;
const byId = await ns.query({ id: 'n3', topK: 1, includeValues: true });
report.queryByIdValues = byId.matches[0].values;

await ns.update({ id: 'n1', metadata: { subject: 'zoe' } });
report.updatedN1 = (await ns.fetch(['n1'])).records.n1.metadata;

const page1 = await ns.listPaginated({ prefix: 'n', limit: 2 });
const page2 = await ns.listPaginated({ prefix: 'n', limit: 2, paginationToken: page1.pagination.next });
report.listPages = [page1.vectors.map((v) => v.id), page2.vectors.map((v) => v.id), page2.pagination?.next ?? null];

let stats = await index.describeIndexStats();
report.statsBefore = { total: stats.totalRecordCount, dimension: stats.dimension, namespaces: stats.namespaces };

await ns.deleteOne('n2');
await ns.deleteMany(['r1', 'never-existed']);
await ns.deleteMany({ subject: { $eq: 'zoe' } });
report.afterDeletes = sorted((await ns.fetch(['n1', 'n2', 'n3', 'r1', 'r2'])).records);
await ns.deleteAll();
stats = await index.describeIndexStats();
report.statsAfter = { total: stats.totalRecordCount, namespaces: stats.namespaces };

try {
  await new Pinecone({ apiKey: 'wrong-key', controllerHostUrl: host }).index('emulated', host).fetch(['d1']);
  report.wrongKey = 'accepted';
} catch (e) {
  report.wrongKey = e.name;
}
try {
  await ns.upsert([{ id: 'bad', values: [1, 2] }]);
  report.badDimension = 'accepted';
} catch (e) {
  report.badDimension = { name: e.name, dimensionMessage: /dimension 2 does not match/.test(e.message) };
}

console.log(JSON.stringify(report));
