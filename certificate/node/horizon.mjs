// horizon.mjs reads the horizon of a v3 certificate (docs/certificate.md,
// "Erasure horizon"): its shape, the checks that its entries can be true
// (part of check 15), and the horizon line every verifier prints beside a
// valid verdict.

import { STR, parseTime } from './jsonsubset.mjs';
import { STORES } from './envelope.mjs';

export const SCHEMA_V3 = 'lethe.certificate/v3';

// HORIZON is the shape of a v3 payload's horizon member, required there.
export const HORIZON = [{ store: STR, copy: STR, status: STR, until: STR, basis: STR }];

// COPIES says which stores each kind of copy belongs to.
const COPIES = {
  pg_wal: ['postgres'],
  wal_archive: ['postgres'],
  backups: ['postgres', 'pinecone'],
  replicas: ['postgres'],
  provider_purge: ['pinecone'],
};

// horizonInconsistency is why a v3 payload's horizon cannot be true, or
// ''. stores is the set of stores of the scope.
export function horizonInconsistency(horizon, stores) {
  if (horizon.length === 0) return `schema ${SCHEMA_V3} with an empty horizon: a v3 certificate states at least one`;
  for (const [i, h] of horizon.entries()) {
    const at = `horizon[${i}]`;
    const owners = Object.hasOwn(COPIES, h.copy) ? COPIES[h.copy] : null;
    if (owners === null) return `${at}.copy ${JSON.stringify(h.copy)} is not pg_wal, wal_archive, backups, replicas or provider_purge`;
    if (!STORES.includes(h.store)) return `${at}.store ${JSON.stringify(h.store)} is not "postgres" or "pinecone"`;
    if (!owners.includes(h.store)) return `${at}: a ${h.store} store has no ${h.copy}`;
    if (!stores.has(h.store)) return `${at}.store ${h.store} has no layer in scope`;
    if (h.basis === '') return `${at}.basis is empty`;
    if (h.status === 'dated') {
      if (parseTime(h.until) === null) return `${at}.until is not an RFC 3339 time of the subset`;
    } else if (h.status === 'conditional' || h.status === 'unknown') {
      if (h.until !== '') return `${at}: status ${h.status}, but until is ${JSON.stringify(h.until)}: only a dated horizon has a date`;
    } else {
      return `${at}.status ${JSON.stringify(h.status)} is not dated, conditional or unknown`;
    }
  }
  return '';
}

// state is one entry's horizon in a few words.
function state(h) {
  if (h.status === 'dated') return `until ${h.until}`;
  if (h.status === 'conditional') return 'until a condition holds';
  return 'unknown';
}

// horizonSummary is the horizon line of a consistent v3 payload:
// '<store> <copy>: <state>' for each entry, joined by '; '.
export function horizonSummary(p) {
  return p.horizon.map((h) => `${h.store} ${h.copy}: ${state(h)}`).join('; ');
}
