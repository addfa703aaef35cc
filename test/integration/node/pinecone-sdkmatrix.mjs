// The Node clients of the Pinecone SDK matrix
// (test/integration/pinecone_sdkmatrix_test.go), each given only the
// proxy's address as its index host:
//   LETHE_MATRIX_STEP=<step> LETHE_MATRIX_DOCS_HOST=<documents index host> \
//     node pinecone-sdkmatrix.mjs <vectors index host> <api-key>
// Steps:
//   node9      @pinecone-database/pinecone 9.x. Vectors API, namespace
//              node9-vectors: upsert, update (setMetadata of another field;
//              and one moving v9-m1 from bob to alice), deleteMany by ids
//              and by a metadata filter (v9-f1), query filtered on user_id. Records API, node9-records:
//              upsertRecords, searchRecords by text, deleteMany by ids.
//              Documents API on the documents index, node9-docs: upsert,
//              update by id (one moving d9-m1 to alice), delete by ids and
//              by a filter (d9-f1), search by text. The default namespace (an index given
//              no namespace): a vector upsert and upsertRecords.
//   langchain  LangChain.js PineconeStore over SDK 5.x, namespace langchain:
//              addDocuments, similaritySearch, delete({ids}); and a store
//              given no namespace adds one document of bob.
//   read       what each API's reads find of alice and of bob now.
// Prints one JSON report; exit 1 on failure.
import { Pinecone as Pinecone9 } from '@pinecone-database/pinecone9';
import { Pinecone as Pinecone5 } from '@pinecone-database/pinecone';
import { PineconeStore } from '@langchain/pinecone';
import { Embeddings } from '@langchain/core/embeddings';
import { Document } from '@langchain/core/documents';

const [host, apiKey] = process.argv.slice(2);
const docsHost = process.env.LETHE_MATRIX_DOCS_HOST;
const step = process.env.LETHE_MATRIX_STEP;
if (!host || !apiKey || !docsHost || !['node9', 'langchain', 'read'].includes(step)) {
  console.error('usage: LETHE_MATRIX_STEP=node9|langchain|read LETHE_MATRIX_DOCS_HOST=<host> node pinecone-sdkmatrix.mjs <host> <api-key>');
  process.exit(2);
}

const pc9 = new Pinecone9({ apiKey });
const vectors = pc9.index({ host, namespace: 'node9-vectors' });
const records = pc9.index({ host, namespace: 'node9-records' });
const docs = pc9.index({ host: docsHost, namespace: 'node9-docs' }).documents;

// Three dimensions: hiking, sailing, and a constant so that no vector is zero.
class TopicEmbeddings extends Embeddings {
  constructor() {
    super({});
  }
  embedDocuments(texts) {
    return Promise.all(texts.map((text) => this.embedQuery(text)));
  }
  async embedQuery(text) {
    return ['hik', 'sail'].map((stem) => (text.includes(stem) ? 1 : 0)).concat(0.25);
  }
}
const index5 = new Pinecone5({ apiKey }).index('sdkm-vectors', host);
const store = new PineconeStore(new TopicEmbeddings(), { pineconeIndex: index5, namespace: 'langchain' });

const ids = (list, key) => list.map((m) => m[key]).sort();
const who = async (name) => ({
  vectors: ids((await vectors.query({ vector: [1, 1, 1], topK: 10, filter: { user_id: { $eq: name } } })).matches, 'id'),
  records: ids((await records.searchRecords({ query: { inputs: { text: 'likes' }, topK: 10, filter: { user_id: { $eq: name } } } })).result.hits, '_id'),
  documents: ids((await docs.search({ scoreBy: [{ type: 'text', fields: ['title'], query: 'on' }], topK: 10, filter: { user_id: { $eq: name } } })).matches, '_id'),
  langchain: (await store.similaritySearch('hiking and sailing', 10, { user_id: name })).map((d) => d.id).sort(),
});

const out = {};
switch (step) {
  case 'node9':
    await vectors.upsert({
      records: [
        { id: 'v9-a1', values: [1, 0, 0], metadata: { user_id: 'alice', year: 2024, weight: 0.5 } },
        { id: 'v9-a2', values: [0.9, 0.1, 0], metadata: { user_id: 'alice', year: 2025 } },
        { id: 'v9-b1', values: [0, 1, 0], metadata: { user_id: 'bob', year: 2023 } },
        { id: 'v9-m1', values: [0, 0, 1], metadata: { user_id: 'bob' } },
        { id: 'v9-f1', values: [0.5, 0.5, 0], metadata: { user_id: 'alice', year: 2019 } },
      ],
    });
    await vectors.update({ id: 'v9-b1', metadata: { topic: 'sailing' } });
    await vectors.update({ id: 'v9-m1', metadata: { user_id: 'alice' } });
    await vectors.deleteMany({ ids: ['v9-a2'] });
    await vectors.deleteMany({ filter: { year: { $eq: 2019 } } });
    out.vectorsQuery = ids((await vectors.query({ vector: [1, 0, 0], topK: 10, filter: { user_id: { $eq: 'alice' } } })).matches, 'id');

    await records.upsertRecords({
      records: [
        { _id: 'r9-a1', chunk_text: 'alice likes hiking', user_id: 'alice' },
        { _id: 'r9-a2', chunk_text: 'alice likes trail shoes', user_id: 'alice' },
        { _id: 'r9-b1', chunk_text: 'bob likes sailing', user_id: 'bob', year: 2023 },
      ],
    });
    out.recordsSearch = ids((await records.searchRecords({ query: { inputs: { text: 'hiking' }, topK: 1 }, fields: ['user_id'] })).result.hits, '_id');
    await records.deleteMany({ ids: ['r9-a2'] });

    const byDefault = pc9.index({ host });
    await byDefault.upsert({
      records: [
        { id: 'dv9-a1', values: [1, 0, 0], metadata: { user_id: 'alice' } },
        { id: 'dv9-b1', values: [0, 1, 0], metadata: { user_id: 'bob' } },
      ],
    });
    await byDefault.upsertRecords({ records: [{ _id: 'dr9-a1', chunk_text: 'alice in the default namespace', user_id: 'alice' }] });

    out.documentsUpserted = (await docs.upsert({
      documents: [
        { _id: 'd9-a1', title: 'Alice on hiking', user_id: 'alice', year: 2024 },
        { _id: 'd9-a2', title: 'Alice on trail shoes', user_id: 'alice' },
        { _id: 'd9-b1', title: 'Bob on sailing', user_id: 'bob' },
        { _id: 'd9-m1', title: 'Bob on knots', user_id: 'bob' },
        { _id: 'd9-f1', title: 'Alice in 2019', user_id: 'alice', year: 2019 },
      ],
    })).upsertedCount;
    out.documentsUpdated = (await docs.update({ documents: [{ _id: 'd9-b1', title: 'Bob on sailing, again' }, { _id: 'd9-m1', user_id: 'alice' }] })).matchedRecords;
    out.documentsDeleted = (await docs.delete({ ids: ['d9-a2'] })).matchedRecords;
    out.documentsDeletedByFilter = (await docs.delete({ filter: { year: { $eq: 2019 } } })).matchedRecords;
    out.documentsSearch = ids((await docs.search({ scoreBy: [{ type: 'text', fields: ['title'], query: 'hiking' }], topK: 1 })).matches, '_id');
    break;
  case 'langchain':
    out.added = await store.addDocuments(
      [
        new Document({ pageContent: 'alice goes hiking', metadata: { user_id: 'alice' } }),
        new Document({ pageContent: 'alice hiking again', metadata: { user_id: 'alice' } }),
        new Document({ pageContent: 'bob goes sailing', metadata: { user_id: 'bob' } }),
      ],
      { ids: ['lc-a1', 'lc-a2', 'lc-b1'] },
    );
    out.search = (await store.similaritySearch('sailing', 1)).map((d) => [d.id, d.metadata.user_id]);
    await store.delete({ ids: ['lc-a2'] });
    out.afterDelete = (await store.similaritySearch('hiking', 10)).map((d) => d.id).sort();
    out.addedByDefault = await new PineconeStore(new TopicEmbeddings(), { pineconeIndex: index5 }).addDocuments(
      [new Document({ pageContent: 'bob sailing in the default namespace', metadata: { user_id: 'bob' } })],
      { ids: ['dlc-b1'] },
    );
    break;
  case 'read':
    out.alice = await who('alice');
    out.bob = await who('bob');
    break;
}
console.log(JSON.stringify(out));
