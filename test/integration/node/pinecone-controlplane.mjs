// Writes through lethe-proxy with a Pinecone SDK given only its API key and
// the proxy's control plane (controllerHostUrl), never an index host, for
// test/integration/pinecone_controlplane_test.go:
//   LETHE_CTRL_SDK=5|9 LETHE_CTRL_INDEX=<name> node pinecone-controlplane.mjs <control-plane-url> <api-key>
// 5.x upserts a vector of alice and a record of bob (upsertRecords);
// 9.x upserts a vector of alice, a record of erin (upsertRecords) and a
// document of carol (index.documents.upsert), then updates the vector and
// the document and deletes an id (deleteMany). All in namespace notes.
// Prints one JSON line
// with the host describe index answered; exit 1 on failure.
import { Pinecone as Pinecone5 } from '@pinecone-database/pinecone';
import { Pinecone as Pinecone9 } from '@pinecone-database/pinecone9';

const [controllerHostUrl, apiKey] = process.argv.slice(2);
const sdk = process.env.LETHE_CTRL_SDK;
const name = process.env.LETHE_CTRL_INDEX;
if (!controllerHostUrl || !apiKey || !name || !['5', '9'].includes(sdk)) {
  console.error('usage: LETHE_CTRL_SDK=5|9 LETHE_CTRL_INDEX=<name> node pinecone-controlplane.mjs <control-plane-url> <api-key>');
  process.exit(2);
}
const out = { sdk };
if (sdk === '5') {
  const pc = new Pinecone5({ apiKey, controllerHostUrl });
  const ns = pc.index(name).namespace('notes');
  await ns.upsert([{ id: 'v5-alice', values: [1, 0, 0], metadata: { user_id: 'alice' } }]);
  await ns.upsertRecords([{ _id: 'r5-bob', chunk_text: 'a record of bob', user_id: 'bob' }]);
  out.describedHost = (await pc.describeIndex(name)).host;
  out.listedHosts = (await pc.listIndexes()).indexes.map((ix) => [ix.name, ix.host]);
} else {
  const pc = new Pinecone9({ apiKey, controllerHostUrl });
  const index = pc.index({ name, namespace: 'notes' });
  await index.upsert({ records: [{ id: 'v9-alice', values: [0, 1, 0], metadata: { user_id: 'alice' } }] });
  await index.upsertRecords({ records: [{ _id: 'r9-erin', chunk_text: 'a record of erin', user_id: 'erin' }] });
  await index.update({ id: 'v9-alice', metadata: { topic: 'notes' } });
  await index.deleteMany({ ids: ['v9-never-written'] });
  out.upserted = (await index.documents.upsert({ documents: [{ _id: 'd9-carol', user_id: 'carol', title: 'a document of carol' }] })).upsertedCount;
  out.updated = (await index.documents.update({ documents: [{ _id: 'd9-carol', title: 'a document of carol, again' }] })).matchedRecords;
}
console.log(JSON.stringify(out));
