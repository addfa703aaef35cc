// document.mjs is the verifier's one entry point, the same in every host:
// verify.mjs (Node) and the browser page (certificate/webverify) use
// loadKeys, verify, parseTime and MAX_SIZE and nothing else.

import { Failure, readDocument } from './envelope.mjs';
import { verifyCertificate } from './certificate.mjs';
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
