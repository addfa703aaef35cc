// addendum.mjs folds a certificate's addenda into its verdict
// (docs/certificate.md, "Addenda"): signed reports of kind forget.physical
// (a later re-scan of a layer's pages, or the batched physical step's
// scan) and forget.replayed (the forget re-applied after a restore) whose
// run_id is the certificate's request_id. Each is checked as a report with
// the log required (report.mjs), then checks A2–A5; those that pass give
// the physical line the newest re-scan of each layer and the replay line
// the newest replay. The certificate's verdict and reason never change.

import { Failure, readDocument } from './envelope.mjs';
import { parseTime } from './jsonsubset.mjs';
import { checkReport } from './report.mjs';
import { state } from './physical.mjs';

const PHYSICAL = 'forget.physical';
const REPLAYED = 'forget.replayed';

// formatTime spells nanoseconds since the epoch as Go's RFC3339Nano in
// UTC: whole seconds, then a fraction without trailing zeros, if any.
export function formatTime(ns) {
  const frac = ((ns % 1000000000n) + 1000000000n) % 1000000000n;
  const seconds = (ns - frac) / 1000000000n;
  const text = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  const digits = frac === 0n ? '' : '.' + frac.toString().padStart(9, '0').replace(/0+$/, '');
  return `${text}${digits}Z`;
}

// checkAddendum runs checks A1–A5 on one addendum ({name, data}) of the
// valid certificate payload p, and returns {name, verdict, reason} and,
// when folded, report, at (nanoseconds) and index (the log index).
async function checkAddendum(a, p, trust, now) {
  const refuse = (verdict, reason) => ({ name: a.name, verdict, reason });
  let checked;
  try {
    // A1: a genuine report, logged, not dated after now.
    const doc = readDocument(a.data);
    if (!Object.hasOwn(doc, 'lethe_report')) {
      return refuse('schema_mismatch', 'not a signed report (no member lethe_report): an addendum is a forget.physical or forget.replayed report');
    }
    checked = await checkReport(doc, trust, now, true);
  } catch (e) {
    if (e instanceof Failure) return refuse(e.verdict, e.message);
    return refuse('malformed', `unreadable: ${e.message}`);
  }
  const { report: r, log } = checked;
  // A2: a kind that reports on a completed forget.
  if (r.kind !== PHYSICAL && r.kind !== REPLAYED) {
    return refuse('not_this_certificate', `a ${r.kind} report is no addendum; addenda are ${PHYSICAL} and ${REPLAYED} reports`);
  }
  // A3: this certificate's request.
  if (r.run_id !== p.request_id) {
    return refuse('not_this_certificate', `run_id ${r.run_id} is another request's; this certificate is request ${p.request_id}`);
  }
  // A4: after the certificate.
  const at = parseTime(r.at);
  if (at < parseTime(p.issued_at)) {
    return refuse('predates_certificate', `at ${formatTime(at)} is before the certificate's issued_at ${formatTime(parseTime(p.issued_at))}; an addendum reports what followed the certificate`);
  }
  // A5: a re-scan looks at the certificate's own layers.
  if (r.kind === PHYSICAL) {
    for (const l of r.layers) {
      if (!p.layers.some((c) => c.store === l.store && c.table === l.table)) {
        return refuse('not_this_certificate', `it re-scans ${l.store} ${l.table}, which is no layer of this certificate`);
      }
    }
  }
  return {
    name: a.name, verdict: 'valid', reason: `${r.kind} at ${formatTime(at)}, leaf ${log.index} of the log, folded`,
    report: r, at, index: log.index,
  };
}

// newer orders folded addenda: the later at, then the later log index.
const newer = (a, b) => (a.at !== b.at ? a.at > b.at : a.index > b.index);

// rescanState is a re-scan's layer in a few words: found is the pages
// scanned, residual those still holding the bytes. A re-scan that was not
// possible scanned nothing and claims nothing either way.
function rescanState(l) {
  if (l.residual > 0n) return `bytes in ${l.residual} of ${l.found} pages scanned`;
  if (l.found > 0n) return `no bytes in ${l.found} pages scanned`;
  return 'no pages scanned';
}

// foldPhysical is the physical line of p with the newest folded re-scan of
// each layer after its certified state.
function foldPhysical(p, rescans) {
  return p.layers.map((l) => {
    let line = `${l.store} ${l.table}: ${state(l.physical)}`;
    let latest = null, layer = null;
    for (const a of rescans) {
      for (const rl of a.report.layers) {
        if (rl.store === l.store && rl.table === l.table && (latest === null || newer(a, latest))) {
          latest = a;
          layer = rl;
        }
      }
    }
    if (latest !== null) line += ` (certified) -> ${rescanState(layer)} at ${formatTime(latest.at)} (addendum, log index ${latest.index})`;
    return line;
  }).join('; ');
}

// replayLine is the replay line of the newest folded replay.
function replayLine(a) {
  let found = 0n, done = 0n, residual = 0n;
  for (const l of a.report.layers) {
    found += l.found;
    done += l.done;
    residual += l.residual;
  }
  return `re-applied after a restore at ${formatTime(a.at)}: ${found} records came back, ${done} deleted, ${residual} left (addendum, log index ${a.index})`;
}

// foldAddenda checks each addendum against the valid certificate payload
// p and adds to result (the certificate's {verdict, reason, physical?,
// horizon?}) the folded physical line, replay, and addenda: one
// {name, verdict, reason} per addendum, in the order given.
export async function foldAddenda(result, p, addenda, trust, now) {
  const checked = [];
  for (const a of addenda) checked.push(await checkAddendum(a, p, trust, now));
  const rescans = checked.filter((a) => a.verdict === 'valid' && a.report.kind === PHYSICAL);
  let replay = null;
  for (const a of checked) {
    if (a.verdict === 'valid' && a.report.kind === REPLAYED && (replay === null || newer(a, replay))) replay = a;
  }
  const out = { ...result, addenda: checked.map(({ name, verdict, reason }) => ({ name, verdict, reason })) };
  if (rescans.length > 0) out.physical = foldPhysical(p, rescans);
  if (replay !== null) out.replay = replayLine(replay);
  return out;
}
