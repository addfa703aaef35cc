// physical.mjs reads the physical section of a v2 certificate's layers
// (docs/certificate.md, "Physical state"): its shape, the checks that its
// counts can all be true (part of check 15), and the physical line every
// verifier prints beside a valid verdict.

import { INT64_MAX, NUM, STR, int } from './jsonsubset.mjs';

export const SCHEMA_V2 = 'lethe.certificate/v2';

// PHYSICAL is the shape of a layer's physical member; in a v2 layer it is
// required.
export const PHYSICAL = {
  status: STR,
  reason: STR,
  method: STR,
  at: STR,
  relations: [{
    relation: STR, kind: STR, pages: NUM, scanned: NUM, holding: NUM, holding_vector: NUM,
    holding_subject: NUM, coverage: STR, took_ms: NUM,
  }],
};

const COUNTS = ['pages', 'scanned', 'holding', 'holding_vector', 'holding_subject', 'took_ms'];
const ALL = 'all';
const SAMPLED = 'targeted+sample';

// readCounts turns the relations' counts into BigInts; it returns the
// first that is no 64-bit integer ('layers[0].physical.relations[1].pages'),
// or ''.
export function readCounts(ph, at) {
  for (const [i, r] of ph.relations.entries()) {
    for (const m of COUNTS) {
      if ((r[m] = int(r[m])) === null) return `${at}.relations[${i}].${m}`;
    }
  }
  return '';
}

// physicalInconsistency is why a physical section's counts cannot all be
// true, or ''. at names it ('layers[0].physical').
export function physicalInconsistency(ph, at) {
  if (ph.status === 'scanned') {
    if (ph.relations.length === 0) return `${at}: status scanned, but no relation is listed`;
  } else if (['not_possible', 'nothing_deleted', 'not_scanned'].includes(ph.status)) {
    if (ph.relations.length !== 0) return `${at}: status ${ph.status}, but relations are listed: only a scan has relations`;
  } else {
    return `${at}.status ${JSON.stringify(ph.status)} is not scanned, not_possible, nothing_deleted or not_scanned`;
  }
  let pages = 0n;
  for (const [i, r] of ph.relations.entries()) {
    const rel = `${at}.relations[${i}]`;
    for (const m of COUNTS) {
      if (r[m] < 0n) return `${rel}.${m} ${r[m]} is negative`;
    }
    if (r.scanned > r.pages) return `${rel} scanned ${r.scanned} pages of ${r.pages}`;
    if (r.holding > r.scanned) return `${rel} has ${r.holding} pages holding the bytes of ${r.scanned} scanned`;
    if (r.holding_vector > r.holding || r.holding_subject > r.holding) {
      return `${rel}: holding_vector ${r.holding_vector} or holding_subject ${r.holding_subject} exceeds holding ${r.holding}`;
    }
    if (r.holding > r.holding_vector + r.holding_subject) {
      return `${rel}: holding ${r.holding} exceeds holding_vector ${r.holding_vector} plus holding_subject ${r.holding_subject}`;
    }
    if (r.coverage === ALL) {
      if (r.scanned !== r.pages) return `${rel}: coverage all, but ${r.scanned} of ${r.pages} pages scanned`;
    } else if (r.coverage !== SAMPLED) {
      return `${rel}.coverage ${JSON.stringify(r.coverage)} is not "${ALL}" or "${SAMPLED}"`;
    }
    // Pages bound every other count, so no other sum can overflow.
    pages += r.pages;
    if (pages > INT64_MAX) return `${at}: the relations' page counts overflow`;
  }
  return '';
}

// state is a layer's physical state in a few words; a v1 layer, which has
// no physical section, is not scanned.
export function state(ph) {
  switch (ph?.status) {
    case 'scanned': {
      let pages = 0n, scanned = 0n, holding = 0n, whole = true;
      for (const r of ph.relations) {
        pages += r.pages;
        scanned += r.scanned;
        holding += r.holding;
        whole &&= r.coverage === ALL;
      }
      if (holding > 0n) return `${holding} of ${scanned} pages scanned still hold the bytes`;
      if (whole) return `clean in all ${scanned} pages`;
      return `clean in the ${scanned} pages scanned of ${pages}`;
    }
    case 'not_possible':
      return 'scan not possible';
    case 'nothing_deleted':
      return 'nothing deleted to look for';
  }
  return 'not scanned';
}

// physicalSummary is the physical line of a consistent v2 payload:
// '<store> <table>: <state>' for each layer, joined by '; '.
export function physicalSummary(p) {
  return p.layers.map((l) => `${l.store} ${l.table}: ${state(l.physical)}`).join('; ');
}
