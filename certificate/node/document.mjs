// document.mjs is the verifier's one entry point, the same in every host:
// verify.mjs (Node) and the browser page (certificate/webverify) use
// loadKeys, verify, verifyWithAddenda, isReport, parseTime and MAX_SIZE
// and nothing else.

import { Failure, readDocument } from './envelope.mjs';
import { checkCertificate, verifyCertificate } from './certificate.mjs';
import { foldAddenda } from './addendum.mjs';
import { verifyReport } from './report.mjs';

export { MAX_SIZE, loadKeys } from './envelope.mjs';
export { parseTime } from './jsonsubset.mjs';

// verify resolves to {verdict, reason} for a certificate or a signed report,
// for a valid v2 or v3 certificate physical, the physical line, and for
// a valid v3 certificate horizon, the horizon line;
// the checks and their order are the tables in docs/certificate.md,
// "Verifying" and "Verifying a report".
export async function verify(data, trust, now, requireLog) {
  try {
    const doc = readDocument(data);
    if (Object.hasOwn(doc, 'lethe_report')) return await verifyReport(doc, trust, now, requireLog);
    return await verifyCertificate(doc, trust, now);
  } catch (e) {
    if (e instanceof Failure) return { verdict: e.verdict, reason: e.message };
    return { verdict: 'malformed', reason: `unreadable: ${e.message}` };
  }
}

// verifyWithAddenda verifies the certificate data with addenda ({name,
// data} each) beside it (docs/certificate.md, "Addenda") and resolves to
// verify's result for it, its verdict and reason unchanged, with, beside
// a valid verdict, the physical line folding in the newest re-scan of
// each layer, replay, the replay line, and addenda, one {name, verdict,
// reason} per addendum. Beside any other verdict nothing is checked or
// folded (addenda is empty). data is read as a certificate whatever it
// holds: a report is no certificate to fold addenda into.
export async function verifyWithAddenda(data, addenda, trust, now) {
  let checked;
  try {
    checked = await checkCertificate(readDocument(data), trust, now);
  } catch (e) {
    if (e instanceof Failure) return { verdict: e.verdict, reason: e.message, addenda: [] };
    return { verdict: 'malformed', reason: `unreadable: ${e.message}`, addenda: [] };
  }
  if (addenda.length === 0) return { ...checked.result, addenda: [] };
  return foldAddenda(checked.result, checked.payload, addenda, trust, now);
}

// isReport says whether data reads as a signed report (an object with a
// member lethe_report) rather than a certificate.
export function isReport(data) {
  try {
    return Object.hasOwn(readDocument(data), 'lethe_report');
  } catch {
    return false;
  }
}
