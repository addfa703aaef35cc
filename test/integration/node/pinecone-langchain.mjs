// Drives LangChain.js PineconeStore (@langchain/pinecone over
// @pinecone-database/pinecone, REST) against a Pinecone data plane:
//   node pinecone-langchain.mjs <host> <api-key>
// Prints one JSON report; the Go test (test/pinecone/emulator/sdk_node_test.go)
// checks it. Embeddings are a fixed keyword map so no model is needed.
import { Pinecone } from '@pinecone-database/pinecone';
import { PineconeStore } from '@langchain/pinecone';
import { Embeddings } from '@langchain/core/embeddings';
import { Document } from '@langchain/core/documents';

const [host, apiKey] = process.argv.slice(2);
if (!host || !apiKey) {
  console.error('usage: node pinecone-langchain.mjs <host> <api-key>');
  process.exit(2);
}

class KeywordEmbeddings extends Embeddings {
  constructor() {
    super({});
  }
  static embed(text) {
    return [text.includes('cat') ? 1 : 0, text.includes('dog') ? 1 : 0, 0.1];
  }
  async embedDocuments(texts) {
    return texts.map(KeywordEmbeddings.embed);
  }
  async embedQuery(text) {
    return KeywordEmbeddings.embed(text);
  }
}

const index = new Pinecone({ apiKey, controllerHostUrl: host }).index('emulated', host);
const store = new PineconeStore(new KeywordEmbeddings(), { pineconeIndex: index, namespace: 'lc' });
const report = {};

report.addedIds = await store.addDocuments(
  [
    new Document({ pageContent: 'a cat on a mat', metadata: { subject: 'alice', source: { page: 3 } } }),
    new Document({ pageContent: 'a dog in a fog', metadata: { subject: 'bob', tags: ['pets'] } }),
  ],
  { ids: ['cat-1', 'dog-1'] },
);

const [cat] = await store.similaritySearch('cat', 1);
report.catSearch = { pageContent: cat.pageContent, metadata: cat.metadata };
const dogs = await store.similaritySearch('anything', 5, { subject: 'bob' });
report.filteredSearch = dogs.map((d) => d.pageContent);

const ns = index.namespace('lc');
report.storedCat = (await ns.fetch(['cat-1'])).records['cat-1'].metadata;

await store.delete({ ids: ['cat-1'] });
report.afterDeleteIds = Object.keys((await ns.fetch(['cat-1', 'dog-1'])).records).sort();
await store.delete({ filter: { subject: 'bob' } });
report.afterDeleteFilter = Object.keys((await ns.fetch(['cat-1', 'dog-1'])).records).sort();

console.log(JSON.stringify(report));
