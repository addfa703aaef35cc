// certificate.mjs verifies a Lethe deletion certificate, payload schema
// v1, v2 or v3 (docs/certificate.md, "Verifying"): after the envelope
// (envelope.mjs), the payload, the key's window, the time, the log and what
// was proven, in the order of the table there. A v2 payload's layers each
// have a physical section (physical.mjs); a v3 payload is a v2 payload
// with a horizon (horizon.mjs).

import { BOOL, INT64_MAX, NUM, STR, checkShape, int, isObject, parseJSON, parseTime } from './jsonsubset.mjs';
import { REQUEST_ID, STORES, checkInclusion, fail, inWindow, isHex256, openEnvelope } from './envelope.mjs';
import { PHYSICAL, SCHEMA_V2, physicalInconsistency, physicalSummary, readCounts } from './physical.mjs';
import { HORIZON, SCHEMA_V3, horizonInconsistency, horizonSummary } from './horizon.mjs';

const SCHEMA_V1 = 'lethe.certificate/v1';

const PAYLOAD_V1 = {
  schema: STR,
  request_id: STR,
  issued_at: STR,
  valid_until: STR,
  subject: { hmac_sha256: STR, commitment: STR },
  scope: [{ store: STR, table: STR }],
  layers: [{
    store: STR, table: STR, requested: NUM, deleted: NUM, residual: NUM,
    verified_absent: BOOL, verify_method: STR, verify_queries: [STR],
  }],
  deleted_ids: { count: NUM, root: STR },
  rules_sha256: STR,
  tool: STR,
  claim: { statement: STR, covers: [STR], excludes: [STR] },
};

// PAYLOAD_V2 is PAYLOAD_V1 whose layers have one member more, physical.
const PAYLOAD_V2 = { ...PAYLOAD_V1, layers: [{ ...PAYLOAD_V1.layers[0], physical: PHYSICAL }] };

// PAYLOAD_V3 is PAYLOAD_V2 with one member more, horizon.
const PAYLOAD_V3 = { ...PAYLOAD_V2, horizon: HORIZON };

const SHAPES = { [SCHEMA_V1]: PAYLOAD_V1, [SCHEMA_V2]: PAYLOAD_V2, [SCHEMA_V3]: PAYLOAD_V3 };

// verifyCertificate verifies a parsed document (readDocument) that is no
// report at the instant now (nanoseconds) and resolves to {verdict,
// reason}, for a v2 or v3 certificate physical, the physical line, and
// for a v3 certificate horizon, the horizon line; it
// rejects with a Failure for any verdict but valid.
export async function verifyCertificate(doc, trust, now) {
  return (await checkCertificate(doc, trust, now)).result;
}

// checkCertificate is verifyCertificate that also resolves to the payload
// it read (counts as BigInts), for the addenda to be folded into it
// (addendum.mjs): {result, payload}.
export async function checkCertificate(doc, trust, now) {
  // 3–11: the envelope, the key and the signature.
  const { payload, payloadSHA256, trusted, log } = await openEnvelope(doc, trust, 'lethe_certificate', 'certificate');
  const keyId = trusted.id;

  // 12–15: the payload, only now that its bytes are known to be signed.
  const p = readPayload(payload);
  const issuedAt = parseTime(p.issued_at);
  const validUntil = parseTime(p.valid_until);

  // 16–18: key window and time.
  if (!inWindow(trusted, issuedAt)) fail('unknown_key', `issued_at ${p.issued_at} is outside the window of key ${keyId}`);
  if (now < issuedAt) fail('not_yet_valid', `issued at ${p.issued_at}, after the time of verification: check the clock`);
  if (now > validUntil) fail('expired', `valid until ${p.valid_until}`);

  // 19: the log.
  if (!log) fail('not_in_log', 'the certificate has no log section');
  // Event values need no JSON escaping, so the leaf has exactly one spelling.
  const want = `{"v":1,"event":"forget.completed","request_id":"${p.request_id}","certificate_sha256":"${payloadSHA256}"}`;
  const cp = await checkInclusion(log, trust, issuedAt, want);

  // 20: what was proven.
  const where = `request ${p.request_id}, signed by ${keyId} at ${p.issued_at}, valid until ${p.valid_until}; leaf ${log.index} of ${cp.size} in log "${cp.origin}"`;
  if (p.scope.length === 0) fail('incomplete', `${where}; but the scope is empty: no layer was checked, so the certificate proves no erasure`);
  const open = p.layers.find((l) => !l.verified_absent || l.residual !== 0n);
  if (open) {
    fail('incomplete', `${where}; but layer ${open.store} ${open.table} has ${open.residual} residual records and verified_absent ${open.verified_absent}: the erasure is not proven complete`);
  }
  const valid = { verdict: 'valid', reason: `${where}; every layer of the scope verified empty` };
  // Beside the verdict, never in it: valid is the logical erasure.
  if (p.schema === SCHEMA_V2 || p.schema === SCHEMA_V3) valid.physical = physicalSummary(p);
  if (p.schema === SCHEMA_V3) valid.horizon = horizonSummary(p);
  return { result: valid, payload: p };
}

// readPayload runs checks 12-15 on the signed payload bytes: JSON of the
// subset, schema, members, types, integers and times, and that its
// statements agree with each other. Counts become BigInts.
function readPayload(payload) {
  let p;
  try {
    p = parseJSON(payload);
  } catch (e) {
    fail('malformed', `payload: not JSON of the subset: ${e.message}`);
  }
  if (!isObject(p)) fail('malformed', 'payload: not a JSON object');
  if (typeof p.schema !== 'string' || !Object.hasOwn(SHAPES, p.schema)) {
    fail('schema_mismatch', `payload: schema is ${JSON.stringify(p.schema)}; this verifier reads ${SCHEMA_V1}, ${SCHEMA_V2} and ${SCHEMA_V3}`);
  }
  const shape = checkShape(p, SHAPES[p.schema], '');
  if (shape.members) fail('schema_mismatch', 'payload: ' + shape.members);
  if (shape.types) fail('malformed', 'payload: ' + shape.types);
  for (const [i, l] of p.layers.entries()) {
    for (const m of ['requested', 'deleted', 'residual']) {
      if ((l[m] = int(l[m])) === null) fail('malformed', `payload: a layer's ${m} is not a 64-bit integer`);
    }
    if (!l.physical) continue;
    const bad = readCounts(l.physical, `layers[${i}].physical`);
    if (bad) fail('malformed', `payload: ${bad} is not a 64-bit integer`);
    if (parseTime(l.physical.at) === null) fail('malformed', `payload: layers[${i}].physical.at is not an RFC 3339 time of the subset`);
  }
  if ((p.deleted_ids.count = int(p.deleted_ids.count)) === null) fail('malformed', 'payload: deleted_ids.count is not a 64-bit integer');
  const issuedAt = parseTime(p.issued_at);
  const validUntil = parseTime(p.valid_until);
  if (issuedAt === null || validUntil === null) fail('malformed', 'payload: issued_at or valid_until is not an RFC 3339 time of the subset');
  const why = inconsistency(p, issuedAt, validUntil);
  if (why) fail('malformed', 'payload: ' + why);
  return p;
}

// inconsistency is check 15: why the payload's statements contradict each
// other, or ''.
function inconsistency(p, issuedAt, validUntil) {
  // Outside this set no log event can name the request.
  if (!REQUEST_ID.test(p.request_id)) return `request_id ${JSON.stringify(p.request_id)}: want 1 to 128 of A-Z a-z 0-9 . _ : -`;
  for (const [name, v] of [['subject.hmac_sha256', p.subject.hmac_sha256], ['subject.commitment', p.subject.commitment],
    ['deleted_ids.root', p.deleted_ids.root], ['rules_sha256', p.rules_sha256]]) {
    if (!isHex256(v)) return `${name} is not 64 lowercase hex digits`;
  }
  if (validUntil <= issuedAt) return 'valid_until is not after issued_at';
  if (p.deleted_ids.count < 0n) return 'deleted_ids.count is negative';
  // Store and table contain no NUL in a valid certificate's ids, but may
  // here: a JSON pair keeps them apart whatever they hold.
  const key = (s) => JSON.stringify([s.store, s.table]);
  const scope = new Set();
  for (const s of p.scope) {
    if (!STORES.includes(s.store)) return `scope store ${JSON.stringify(s.store)} is not "postgres" or "pinecone"`;
    if (scope.has(key(s))) return `scope entry ${s.store} ${s.table} is listed twice`;
    scope.add(key(s));
  }
  let deleted = 0n;
  for (const [i, l] of p.layers.entries()) {
    if (!scope.delete(key(l))) return `layer ${l.store} ${l.table} is not in the scope, or is listed twice`;
    for (const m of ['requested', 'deleted', 'residual']) {
      if (l[m] < 0n) return `a layer's ${m} is negative`;
    }
    if (l.verified_absent && l.residual !== 0n) return `layer ${l.store} ${l.table} is verified absent but has residual records`;
    if (l.physical) {
      const why = physicalInconsistency(l.physical, `layers[${i}].physical`);
      if (why) return why;
    }
    deleted += l.deleted;
    if (deleted > INT64_MAX) return "the layers' deleted counts overflow";
  }
  if (scope.size > 0) return 'a scope entry has no entry in layers';
  if (p.schema === SCHEMA_V3) {
    const why = horizonInconsistency(p.horizon, new Set(p.scope.map((s) => s.store)));
    if (why) return why;
  }
  if (deleted !== p.deleted_ids.count) return `deleted_ids.count is ${p.deleted_ids.count}, but the layers deleted ${deleted} records`;
  return '';
}
