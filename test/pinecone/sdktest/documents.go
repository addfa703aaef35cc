package sdktest

// NodeDocumentsReport is the report test/integration/node/pinecone9-documents.mjs
// prints when every documents call of @pinecone-database/pinecone 9.x
// (index.documents.upsert, fetch by ids and by filter with pages, list,
// search by text and by dense vector, update by id and by filter, delete
// by ids, by filter and all, and two refusals) behaves as against Pinecone.
const NodeDocumentsReport = `{
  "upserted": 3,
  "fetchIds": ["a1", "b1"],
  "fetchB1": {"_id": "b1", "embedding": [0, 1, 0], "tags": ["sea", "wind"], "title": "Bob on sailing", "user_id": "bob", "year": 2023},
  "fetchNamespace": "docs",
  "fetchDefault": ["d1"],
  "fetchByFilterPages": [{"a1": {"_id": "a1", "user_id": "alice"}}, {"a2": {"_id": "a2", "user_id": "alice"}}, null],
  "listPages": [["a1", "a2"], ["b1"], null],
  "listPrefix": ["a1", "a2"],
  "searchText": [["a1", 2, "Alice on hiking"], ["a2", 1, "Alice on trail shoes"]],
  "searchDense": ["a1", "b1"],
  "updateById": 1,
  "updatedA2": {"_id": "a2", "embedding": [0.8, 0.2, 0], "title": "Alice on trail shoes", "user_id": "carol"},
  "updateByFilter": 1,
  "updatedB1Reviewed": {"_id": "b1", "reviewed": true},
  "deleteIds": 1,
  "deleteFilter": 1,
  "afterDeletes": ["b1"],
  "deleteAll": 1,
  "afterDeleteAll": 0,
  "reservedField": {"name": "PineconeBadRequestError", "reservedMessage": true},
  "wrongKey": "PineconeAuthorizationError"
}`
