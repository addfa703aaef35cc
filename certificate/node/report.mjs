// report.mjs verifies a signed report, lethe.report/v1 (docs/certificate.md,
// "Reports"): the account Lethe signs of a retention sweep or a
// reconcile's adoption. A report is genuine or not; it has no validity
// period. The checks and their order are the table "Verifying a report".

import { NUM, STR, checkShape, int, isObject, optional, parseJSON, parseTime } from './jsonsubset.mjs';
import { REQUEST_ID, STORES, checkInclusion, fail, inWindow, openEnvelope } from './envelope.mjs';

const SCHEMA = 'lethe.report/v1';
// A report's kind is also the name of the event the log holds for it.
const KINDS = ['retention.swept', 'reconcile.adopted', 'forget.replayed', 'forget.physical'];

const REPORT = {
  schema: STR,
  kind: STR,
  run_id: STR,
  at: STR,
  layers: [{ store: STR, table: STR, found: NUM, done: NUM, residual: NUM, method: STR, cutoff: optional(STR) }],
};

// verifyReport verifies a parsed document (readDocument) that has a
// member lethe_report, and resolves to {verdict, reason}; it rejects with
// a Failure for any verdict but valid.
// now (nanoseconds) is the instant of verification: a report dated after
// it is not_yet_valid. requireLog makes a report without a log section
// not_in_log.
export async function verifyReport(doc, trust, now, requireLog) {
  return (await checkReport(doc, trust, now, requireLog)).result;
}

// checkReport is verifyReport that also resolves to the report it read
// (counts as BigInts) and its log section (null when it has none), for
// addenda (addendum.mjs): {result, report, log}.
export async function checkReport(doc, trust, now, requireLog) {
  // R3–R11: as a certificate's envelope, with lethe_report for its version.
  const { payload, payloadSHA256, trusted, log } = await openEnvelope(doc, trust, 'lethe_report', 'report');

  // R12–R15: the payload.
  const r = readReport(payload);
  const at = parseTime(r.at);

  // R16: the key may sign at "at".
  if (!inWindow(trusted, at)) fail('unknown_key', `at ${r.at} is outside the window of key ${trusted.id}`);

  // R16a: not dated after the instant of verification.
  if (now < at) fail('not_yet_valid', `at ${r.at}, after the time of verification: check the clock`);

  // R17: the log, when the report carries a log section (or must).
  const what = `${r.kind} ${r.run_id} at ${r.at}, signed by ${trusted.id}`;
  if (!log && requireLog) fail('not_in_log', 'the report has no log section and the log was required');
  if (!log) return { result: { verdict: 'valid', reason: `${what}; not logged` }, report: r, log: null };
  const want = `{"v":1,"event":"${r.kind}","request_id":"${r.run_id}","report_sha256":"${payloadSHA256}"}`;
  const cp = await checkInclusion(log, trust, at, want);
  return { result: { verdict: 'valid', reason: `${what}; leaf ${log.index} of ${cp.size} in log "${cp.origin}"` }, report: r, log };
}

// readReport reads the signed payload bytes: JSON of the subset; schema
// and kind known; members exactly; types; integers and times of the
// subsets; then what a report must not say (a bad run_id, a count below 0).
function readReport(payload) {
  let r;
  try {
    r = parseJSON(payload);
  } catch (e) {
    fail('malformed', `payload: not JSON of the subset: ${e.message}`);
  }
  if (!isObject(r)) fail('malformed', 'payload: not a JSON object');
  if (r.schema !== SCHEMA) fail('schema_mismatch', `payload: schema is ${JSON.stringify(r.schema)}; this verifier reads ${SCHEMA}`);
  if (!KINDS.includes(r.kind)) fail('schema_mismatch', `payload: kind is ${JSON.stringify(r.kind)}; this verifier reads ${KINDS.join(' and ')}`);
  const shape = checkShape(r, REPORT, '');
  if (shape.members) fail('schema_mismatch', 'payload: ' + shape.members);
  if (shape.types) fail('malformed', 'payload: ' + shape.types);
  if (parseTime(r.at) === null) fail('malformed', `payload: at ${JSON.stringify(r.at)} is not an RFC 3339 time of the subset`);
  r.layers.forEach((l, i) => {
    for (const m of ['found', 'done', 'residual']) {
      if ((l[m] = int(l[m])) === null) fail('malformed', `payload: layers[${i}].${m} is not a 64-bit integer`);
    }
    if (Object.hasOwn(l, 'cutoff') && parseTime(l.cutoff) === null) {
      fail('malformed', `payload: layers[${i}].cutoff ${JSON.stringify(l.cutoff)} is not an RFC 3339 time of the subset`);
    }
  });
  if (!REQUEST_ID.test(r.run_id)) fail('malformed', `payload: run_id ${JSON.stringify(r.run_id)}: want 1 to 128 of A-Z a-z 0-9 . _ : -`);
  const seen = new Set();
  r.layers.forEach((l, i) => {
    const bad = (why) => fail('malformed', `payload: layers[${i}] ${why}`);
    const key = JSON.stringify([l.store, l.table]);
    if (!STORES.includes(l.store)) bad(`store ${JSON.stringify(l.store)} is not "postgres" or "pinecone"`);
    if (seen.has(key)) bad('is listed twice');
    seen.add(key);
    if (l.found < 0n || l.done < 0n || l.residual < 0n) bad('has a negative count');
    if (l.done > l.found) bad('has done more than found');
    const hasCutoff = Object.hasOwn(l, 'cutoff');
    if (r.kind === 'retention.swept' && !hasCutoff) bad("is a sweep's and has no cutoff");
    if (r.kind !== 'retention.swept' && hasCutoff) bad("is not a sweep's and has a cutoff");
    if (r.kind === 'reconcile.adopted' && l.residual !== 0n) bad("is a reconcile's and has a residual other than 0");
    // Every page a re-scan read is free of the bytes or holds them.
    if (r.kind === 'forget.physical' && l.done + l.residual !== l.found) bad("is a re-scan's and its done and residual do not add up to found (the pages scanned)");
  });
  return r;
}
