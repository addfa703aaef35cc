#!/usr/bin/env node
// Write shape: LangChain.js PGVectorStore (@langchain/community, pinned in
// ../node/package.json) writing documents for two data subjects.
//
// Usage: node langchainjs.js URL PREFIX MODE
//
// MODE "auto": addDocuments without ids into PREFIX_lcjs, so the database
// generates the uuid ids (column DEFAULT gen_random_uuid()).
// MODE "ids": addDocuments with {ids: [...]} into PREFIX_lcjs_ids.
//
// What the library sends (@langchain/community 1.1.29, node-postgres 8.23.1):
// initialize() runs "CREATE EXTENSION IF NOT EXISTS vector;" and
// "CREATE TABLE IF NOT EXISTS ... (id uuid NOT NULL DEFAULT gen_random_uuid()
// PRIMARY KEY, text text, metadata jsonb, embedding vector(8))" as parameterless
// queries (simple protocol); addDocuments sends ONE multi-row
//   INSERT INTO <table>( "text", "embedding", "metadata"[, "id"] ) VALUES ($1, $2, $3), ($4, $5, $6), ...
// per 500 rows over the extended protocol (unnamed statement, all parameters
// text format with unspecified type OIDs: the embedding as '[x,y,...]', the
// metadata as JSON.stringify(object)), no ON CONFLICT.
//
// The output is one JSON document that depends only on what was written, so
// a run through lethe-proxy prints exactly what a direct run prints.
'use strict';

const path = require('path');
const { createRequire } = require('module');

const req = createRequire(path.join(__dirname, '..', 'node', 'package.json'));
const { PGVectorStore } = req('@langchain/community/vectorstores/pgvector');
const { SyntheticEmbeddings } = req('@langchain/core/utils/testing');
const { Document } = req('@langchain/core/documents');

const SUBJECTS = ['alice@example.com', 'bob@example.com'];
const PER_SUBJECT = 3;
const WATCHDOG_MS = 60000;

async function main() {
  const [url, prefix, mode] = process.argv.slice(2);
  if (!url || !prefix || !['auto', 'ids'].includes(mode)) {
    throw new Error('usage: langchainjs.js URL PREFIX auto|ids');
  }
  const tableName = mode === 'auto' ? `${prefix}_lcjs` : `${prefix}_lcjs_ids`;
  // Deterministic 8-dimensional embeddings computed from the text.
  const embeddings = new SyntheticEmbeddings({ vectorSize: 8 });
  const store = await PGVectorStore.initialize(embeddings, {
    postgresConnectionOptions: { connectionString: url, connectionTimeoutMillis: 10000 },
    tableName,
    dimensions: 8,
    columns: {
      idColumnName: 'id',
      vectorColumnName: 'embedding',
      contentColumnName: 'text',
      metadataColumnName: 'metadata',
    },
  });
  const docs = [];
  const ids = [];
  const counts = {};
  const written = {};
  for (let i = 0; i < PER_SUBJECT; i++) {
    SUBJECTS.forEach((subject, s) => {
      docs.push(new Document({
        pageContent: `note ${i} about ${subject}`,
        metadata: { user_id: subject, source: 'langchainjs', seq: i },
      }));
      // uuid ids the caller chooses: ...-a00i for alice, ...-b00i for bob.
      const id = `00000000-0000-4000-8000-000000${s === 0 ? 'a' : 'b'}${String(i).padStart(5, '0')}`;
      ids.push(id);
      counts[subject] = (counts[subject] || 0) + 1;
      if (mode === 'ids') (written[subject] = written[subject] || []).push(id);
    });
  }
  try {
    if (mode === 'ids') {
      await store.addDocuments(docs, { ids });
    } else {
      await store.addDocuments(docs);
    }
  } finally {
    await store.end();
  }
  // ids: only the ids the client chose (none when the database generates them).
  const out = { shape: `langchainjs-${mode}`, table: tableName, rows: docs.length, counts, ids: written };
  process.stdout.write(JSON.stringify(out, null, 1) + '\n');
}

const watchdog = setTimeout(() => {
  process.stderr.write('langchainjs.js: watchdog expired\n');
  process.exit(3);
}, WATCHDOG_MS);
main().then(() => clearTimeout(watchdog), (e) => {
  process.stderr.write(`${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
