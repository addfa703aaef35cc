#!/usr/bin/env node
// verify.mjs verifies a Lethe deletion certificate, version 1
// (docs/certificate.md), independently of the Go code: it reads the same
// bytes and runs the same checks in the same order, using only node:crypto
// and node:fs, so an auditor can read it in one sitting.
//
//   node verify.mjs KEYS.json CERT.json [--now RFC3339]     (CERT.json "-": stdin)
//
// It prints "verdict: <verdict>" and a reason. The exit status is 0 only for
// "valid", 1 for any other verdict, and 2 when it cannot run (usage, an
// unreadable or invalid keys file).

import { createHash, createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { createReadStream } from 'node:fs';

const MAX_SIZE = 1 << 20;
const SCHEMA_V1 = 'lethe.certificate/v1';
const INT64_MAX = 2n ** 63n - 1n;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const MAX_DEPTH = 64;

// A Failure carries the verdict of the first failed check.
class Failure extends Error {
  constructor(verdict, reason) {
    super(reason);
    this.verdict = verdict;
  }
}
const fail = (verdict, reason) => {
  throw new Failure(verdict, reason);
};

// ---- JSON: the subset of docs/certificate.md ("JSON") ----

// A JSON number keeps its text, so that integers are read from what was
// written (2.0 is not an integer) and nothing is rounded.
class JNum {
  constructor(text) {
    this.text = text;
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

// parseJSON reads UTF-8 bytes as one JSON value in the subset: RFC 8259,
// no byte order mark, no escaped lone surrogate, no member name twice in
// one object, nesting at most MAX_DEPTH. It throws an Error saying why not.
function parseJSON(bytes) {
  const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes); // throws on invalid UTF-8
  let i = 0;
  const err = (why) => {
    throw new Error(`${why} at offset ${i}`);
  };
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const string = () => {
    i++; // the opening quote
    let out = '';
    for (;;) {
      if (i >= text.length) err('unterminated string');
      const c = text[i++];
      if (c === '"') return out;
      if (c < ' ') err('control character in a string');
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = text[i++];
      const simple = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' }[e];
      if (simple !== undefined) {
        out += simple;
        continue;
      }
      if (e !== 'u') err('invalid escape');
      const hex4 = () => {
        const h = text.slice(i, i + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(h)) err('invalid \\u escape');
        i += 4;
        return parseInt(h, 16);
      };
      const u = hex4();
      if (u >= 0xdc00 && u <= 0xdfff) err('low surrogate without a high one');
      if (u >= 0xd800 && u <= 0xdbff) {
        if (text[i] !== '\\' || text[i + 1] !== 'u') err('high surrogate without a low one');
        i += 2;
        const lo = hex4();
        if (lo < 0xdc00 || lo > 0xdfff) err('high surrogate without a low one');
        out += String.fromCharCode(u, lo);
      } else {
        out += String.fromCharCode(u);
      }
    }
  };
  const value = (depth) => {
    space();
    const c = text[i];
    if (c === '{' || c === '[') {
      if (depth >= MAX_DEPTH) err(`values nest deeper than ${MAX_DEPTH}`);
      i++;
      const close = c === '{' ? '}' : ']';
      const out = c === '{' ? Object.create(null) : []; // no prototype: "__proto__" is a name like any other
      space();
      if (text[i] === close) {
        i++;
        return out;
      }
      for (;;) {
        if (c === '{') {
          space();
          if (text[i] !== '"') err('expected a member name');
          const name = string();
          if (Object.hasOwn(out, name)) err(`member ${JSON.stringify(name)} appears twice`);
          space();
          if (text[i++] !== ':') err('expected a colon');
          out[name] = value(depth + 1);
        } else {
          out.push(value(depth + 1));
        }
        space();
        const sep = text[i++];
        if (sep === close) return out;
        if (sep !== ',') err(`expected , or ${close}`);
      }
    }
    if (c === '"') return string();
    for (const [word, v] of [['true', true], ['false', false], ['null', null]]) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) err('invalid value');
    i += m[0].length;
    return new JNum(m[0]);
  };
  const v = value(0);
  space();
  if (i !== text.length) err('data after the JSON value');
  return v;
}

// ---- times: the RFC 3339 subset, as nanoseconds since the epoch ----

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

// daysFromCivil counts days from 1970-01-01 to a proleptic Gregorian date.
function daysFromCivil(y, m, d) {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

// parseTime reads a time of the subset as BigInt nanoseconds since the
// epoch, or null: a date that exists, hours 00-23, minutes and seconds
// 00-59, at most 9 digits of fraction, an offset below 24 hours.
function parseTime(s) {
  const m = typeof s === 'string' ? RFC3339.exec(s) : null;
  if (!m) return null;
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map(Number);
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  if (mo < 1 || mo > 12 || d < 1 || d > days[mo - 1] || h > 23 || mi > 59 || sec > 59) return null;
  let offset = 0;
  if (m[8]) {
    const oh = Number(m[9]), om = Number(m[10]);
    if (oh > 23 || om > 59) return null;
    offset = (m[8] === '-' ? -1 : 1) * (oh * 60 + om) * 60;
  }
  const seconds = BigInt(daysFromCivil(y, mo, d)) * 86400n + BigInt(h * 3600 + mi * 60 + sec - offset);
  return seconds * 1000000000n + BigInt((m[7] ?? '').padEnd(9, '0'));
}

// ---- shapes: the members each object must have, exactly, and their types ----

const STR = 'a string', NUM = 'a number', BOOL = 'a boolean';
const optional = (shape) => ({ optional: shape });

const ENVELOPE = {
  lethe_certificate: NUM,
  payload: STR,
  payload_sha256: STR,
  signature: { alg: STR, key_id: STR, public_key: STR, sig: STR },
  log: optional({ leaf: STR, index: NUM, proof: [STR], checkpoint: STR }),
};

const PAYLOAD = {
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

const KEYS_FILE = {
  log_origin: STR,
  keys: [{ key_id: STR, public_key: STR, not_before: STR, not_after: optional(STR) }],
};

// checkShape walks value against shape. Like the Go verifier, an unknown or
// missing member (schema_mismatch) outranks a member of the wrong JSON type
// (malformed); integers and times are read later. An optional member may
// be absent; only the envelope's log may also be null.
function checkShape(value, shape, path, found = {}, nullable = false) {
  if (shape.optional) {
    if (value === null && nullable) return found;
    shape = shape.optional;
  }
  const name = path || 'the value';
  if (typeof shape === 'string') {
    const ok = shape === NUM ? value instanceof JNum : typeof value === (shape === BOOL ? 'boolean' : 'string');
    if (!ok) found.types ??= `${name} is not ${shape}`;
    return found;
  }
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) {
      found.types ??= `${name} is not an array`;
      return found;
    }
    value.forEach((v, i) => checkShape(v, shape[0], `${path}[${i}]`, found));
    return found;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof JNum) {
    found.types ??= `${name} is not an object`;
    return found;
  }
  const prefix = path ? path + '.' : '';
  for (const [member, s] of Object.entries(shape)) {
    if (!Object.hasOwn(value, member)) {
      if (!s.optional) found.members ??= `member "${prefix}${member}" is missing`;
      continue;
    }
    checkShape(value[member], s, prefix + member, found, path === '' && member === 'log' && shape === ENVELOPE);
  }
  if (found.members) return found;
  const unknown = Object.keys(value).filter((m) => !Object.hasOwn(shape, m)).sort(byUTF8);
  if (unknown.length > 0) found.members = `unknown member "${prefix}${unknown[0]}"`;
  return found;
}

// byUTF8 orders strings by their UTF-8 bytes, as Go compares strings.
const byUTF8 = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));

// int reads a JSON number written as an integer (no fraction, no
// exponent) that fits in 64 bits, as a BigInt; null if it is not one.
function int(n) {
  if (!/^-?(?:0|[1-9][0-9]*)$/.test(n.text)) return null;
  const v = BigInt(n.text);
  return v >= -INT64_MAX - 1n && v <= INT64_MAX ? v : null;
}

const sha256 = (...parts) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

// base64 decodes canonical standard base64 (re-encoding gives s back) of
// exactly n bytes, or of any length when n < 0.
function base64(s, n, what) {
  const b = Buffer.from(s, 'base64');
  if (b.toString('base64') !== s) fail('malformed', `${what}: not canonical standard base64`);
  if (n >= 0 && b.length !== n) fail('malformed', `${what}: ${b.length} bytes, want ${n}`);
  return b;
}

const isHex256 = (s) => /^[0-9a-f]{64}$/.test(s);
const keyID = (pub) => 'ed25519:' + sha256(pub).subarray(0, 16).toString('hex');

function ed25519Verify(pub, msg, sig) {
  if (sig.length !== 64) return false;
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: pub.toString('base64url') }, format: 'jwk' });
    return cryptoVerify(null, msg, key, sig);
  } catch {
    return false; // not a point on the curve
  }
}

// ---- trusted keys ----

// The y coordinates (little endian, sign bit clear) of the points of order
// 1, 2, 4 and 8: keys a signature can be forged under.
const SMALL_ORDER_Y = [
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
];

// weakKey says why a public key may not be trusted: not a canonical
// encoding (y not below 2^255-19), or of small order; '' otherwise.
function weakKey(pub) {
  const y = Buffer.from(pub);
  y[31] &= 0x7f;
  const le = BigInt('0x' + Buffer.from(y).reverse().toString('hex'));
  if (le >= 2n ** 255n - 19n) return 'is not a canonical encoding';
  if (SMALL_ORDER_Y.includes(y.toString('hex'))) return 'is a point of small order';
  return '';
}

// isNoteName is the signed-note rule for key names: non-empty, no plus
// sign, no Unicode White_Space (the set Go's unicode.IsSpace uses).
const isNoteName = (s) => s !== '' && !/[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000+]/.test(s);

const EPOCH = 0n;

// loadKeys reads a trusted keys file and refuses what the Go verifier
// refuses: the JSON subset, exact members, ids that do not match their
// key, weak keys, duplicates, windows that end before they start.
function loadKeys(bytes) {
  const file = parseJSON(bytes);
  const found = checkShape(file, KEYS_FILE, '');
  if (found.members || found.types) throw new Error(found.members || found.types);
  file.keys.forEach((k, i) => {
    for (const m of ['not_before', 'not_after']) {
      if (Object.hasOwn(k, m) && parseTime(k[m]) === null) throw new Error(`keys[${i}].${m}: ${JSON.stringify(k[m])} is not an RFC 3339 time`);
    }
  });
  if (!isNoteName(file.log_origin)) throw new Error(`log origin ${JSON.stringify(file.log_origin)} is not a log name`);
  if (file.keys.length === 0) throw new Error('the set is empty');
  const seen = new Set();
  const keys = file.keys.map((k, i) => {
    const where = `key ${i + 1} (${k.key_id})`;
    const pub = Buffer.from(k.public_key, 'base64');
    if (pub.toString('base64') !== k.public_key || pub.length !== 32) throw new Error(`${where}: public_key is not 32 bytes of base64`);
    const weak = weakKey(pub);
    if (weak) throw new Error(`${where}: public_key ${weak}`);
    if (keyID(pub) !== k.key_id) throw new Error(`${where}: key_id does not match its public_key, whose id is ${keyID(pub)}`);
    if (seen.has(k.key_id)) throw new Error(`${where}: listed twice`);
    seen.add(k.key_id);
    const notBefore = parseTime(k.not_before);
    const notAfter = Object.hasOwn(k, 'not_after') ? parseTime(k.not_after) : null;
    if (notBefore < EPOCH || (notAfter !== null && notAfter < EPOCH)) throw new Error(`${where}: not_before and not_after are no earlier than 1970`);
    if (notAfter !== null && notAfter < notBefore) throw new Error(`${where}: not_after is before not_before`);
    return { id: k.key_id, pub, notBefore, notAfter };
  });
  return { origin: file.log_origin, keys };
}

// ---- verifying ----

// verify returns {verdict, reason}; the checks and their order are the
// table in docs/certificate.md, "Verifying".
function verify(data, trust, now) {
  try {
    return verifyOrThrow(data, trust, now);
  } catch (e) {
    if (e instanceof Failure) return { verdict: e.verdict, reason: e.message };
    return { verdict: 'malformed', reason: `unreadable: ${e.message}` };
  }
}

function verifyOrThrow(data, trust, now) {
  const { keys } = trust;
  // 1–6: the envelope.
  if (data.length > MAX_SIZE) fail('oversized', `more than ${MAX_SIZE} bytes; a certificate is at most ${MAX_SIZE}`);
  let env;
  try {
    env = parseJSON(data);
  } catch (e) {
    fail('malformed', `not JSON of the subset: ${e.message}`);
  }
  if (env === null || typeof env !== 'object' || Array.isArray(env) || env instanceof JNum) fail('malformed', 'not a JSON object');
  const version = env.lethe_certificate;
  if (!(version instanceof JNum && version.text === '1')) {
    fail('schema_mismatch', `lethe_certificate is ${version instanceof JNum ? version.text : JSON.stringify(version)}; this verifier reads version 1`);
  }
  const shape = checkShape(env, ENVELOPE, '');
  if (shape.members) fail('schema_mismatch', 'envelope: ' + shape.members);
  if (shape.types) fail('malformed', 'envelope: ' + shape.types);
  let index = null;
  if (env.log != null) {
    index = int(env.log.index);
    if (index === null) fail('malformed', `envelope: log.index ${env.log.index.text} is not a 64-bit integer`);
  }
  const sig = env.signature;
  if (sig.alg !== 'ed25519') fail('schema_mismatch', `signature.alg ${JSON.stringify(sig.alg)}; v1 certificates use "ed25519"`);
  const payload = base64(env.payload, -1, 'payload');
  const publicKey = base64(sig.public_key, 32, 'signature.public_key');
  const signature = base64(sig.sig, 64, 'signature.sig');
  let log = null;
  if (env.log != null) {
    log = {
      leaf: base64(env.log.leaf, -1, 'log.leaf'),
      proof: env.log.proof.map((p, i) => base64(p, 32, `log.proof[${i}]`)),
      index,
      checkpoint: env.log.checkpoint,
    };
  }
  if (!isHex256(env.payload_sha256)) fail('malformed', 'payload_sha256: want 64 lowercase hex digits');
  if (log && log.index < 0n) fail('malformed', `log.index ${log.index} is negative`);

  // 7–11: key and signature.
  if (sig.key_id !== keyID(publicKey)) fail('key_id_mismatch', `key_id ${sig.key_id}, but the embedded public key's id is ${keyID(publicKey)}`);
  const trusted = keys.find((k) => k.id === sig.key_id);
  if (!trusted) fail('unknown_key', `key ${sig.key_id} is not in the trusted keys`);
  if (!trusted.pub.equals(publicKey)) fail('key_mismatch', `the embedded public key differs from the trusted key ${sig.key_id}`);
  const payloadSHA256 = sha256(payload).toString('hex');
  if (payloadSHA256 !== env.payload_sha256) fail('payload_tampered', `payload hashes to ${payloadSHA256}, not to payload_sha256`);
  if (!ed25519Verify(trusted.pub, payload, signature)) fail('bad_signature', `the signature is not ${sig.key_id}'s signature of the payload`);

  // 12–15: the payload, only now that its bytes are known to be signed.
  const p = readPayload(payload);
  const issuedAt = parseTime(p.issued_at);
  const validUntil = parseTime(p.valid_until);

  // 16–18: key window and time.
  if (issuedAt < trusted.notBefore || (trusted.notAfter !== null && issuedAt > trusted.notAfter)) {
    fail('unknown_key', `issued_at ${p.issued_at} is outside the window of key ${sig.key_id}`);
  }
  if (now < issuedAt) fail('not_yet_valid', `issued at ${p.issued_at}, after the time of verification: check the clock`);
  if (now > validUntil) fail('expired', `valid until ${p.valid_until}`);

  // 19: the log.
  if (!log) fail('not_in_log', 'the certificate has no log section');
  if (!REQUEST_ID.test(p.request_id)) fail('not_in_log', 'no log event can name this request_id');
  // Event values need no JSON escaping, so the leaf has exactly one spelling.
  const want = `{"v":1,"event":"forget.completed","request_id":"${p.request_id}","certificate_sha256":"${payloadSHA256}"}`;
  if (!log.leaf.equals(Buffer.from(want))) fail('not_in_log', `log.leaf is not this certificate's event; want ${want}`);
  // A checkpoint containing the certificate was signed after its issuance:
  // keys retired before then cannot vouch for it.
  const cp = openCheckpoint(log.checkpoint, trust, (k) => k.notAfter === null || k.notAfter >= issuedAt);
  if (log.index >= cp.size) fail('not_in_log', `log.index ${log.index} is beyond the checkpoint's tree of ${cp.size} leaves`);
  const root = rootFromInclusionProof(log.index, cp.size, sha256(Buffer.from([0]), log.leaf), log.proof);
  if (!root || !root.equals(cp.root)) fail('not_in_log', 'the inclusion proof does not lead to the checkpoint root');

  // 20: what was proven.
  const where = `request ${p.request_id}, signed by ${sig.key_id} at ${p.issued_at}, valid until ${p.valid_until}; leaf ${log.index} of ${cp.size} in log "${cp.origin}"`;
  const open = p.layers.find((l) => !l.verified_absent || l.residual !== 0n);
  if (open) {
    fail('incomplete', `${where}; but layer ${open.store} ${open.table} has ${open.residual} residual records and verified_absent ${open.verified_absent}: the erasure is not proven complete`);
  }
  return { verdict: 'valid', reason: `${where}; every layer of the scope verified empty` };
}

// readPayload runs checks 12–15 on the signed bytes: a v1 payload, spelled
// member for member, whose integers and times are of the subset and whose
// statements agree with each other. Counts become BigInts.
function readPayload(payload) {
  let p;
  try {
    p = parseJSON(payload);
  } catch (e) {
    fail('malformed', `payload: not JSON of the subset: ${e.message}`);
  }
  if (p === null || typeof p !== 'object' || Array.isArray(p) || p instanceof JNum) fail('malformed', 'payload: not a JSON object');
  if (p.schema !== SCHEMA_V1) fail('schema_mismatch', `payload: schema is ${JSON.stringify(p.schema)}; this verifier reads ${SCHEMA_V1}`);
  const shape = checkShape(p, PAYLOAD, '');
  if (shape.members) fail('schema_mismatch', 'payload: ' + shape.members);
  if (shape.types) fail('malformed', 'payload: ' + shape.types);
  for (const l of p.layers) {
    for (const m of ['requested', 'deleted', 'residual']) {
      if ((l[m] = int(l[m])) === null) fail('malformed', `payload: a layer's ${m} is not a 64-bit integer`);
    }
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
    if (scope.has(key(s))) return `scope entry ${s.store} ${s.table} is listed twice`;
    scope.add(key(s));
  }
  let deleted = 0n;
  for (const l of p.layers) {
    if (!scope.delete(key(l))) return `layer ${l.store} ${l.table} is not in the scope, or is listed twice`;
    for (const m of ['requested', 'deleted', 'residual']) {
      if (l[m] < 0n) return `a layer's ${m} is negative`;
    }
    if (l.verified_absent && l.residual !== 0n) return `layer ${l.store} ${l.table} is verified absent but has residual records`;
    deleted += l.deleted;
    if (deleted > INT64_MAX) return "the layers' deleted counts overflow";
  }
  if (scope.size > 0) return 'a scope entry has no entry in layers';
  if (deleted !== p.deleted_ids.count) return `deleted_ids.count is ${p.deleted_ids.count}, but the layers deleted ${deleted} records`;
  return '';
}

// rootFromInclusionProof runs an RFC 6962 audit path (RFC 9162 §2.1.3.2)
// from a leaf hash up to the root it implies, or null if the path does not
// fit a tree of this size.
function rootFromInclusionProof(index, size, leafHash, proof) {
  let fn = index, sn = size - 1n, r = leafHash;
  for (const p of proof) {
    if (sn === 0n) return null;
    if ((fn & 1n) === 1n || fn === sn) {
      r = sha256(Buffer.from([1]), p, r);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = sha256(Buffer.from([1]), r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n ? r : null;
}

// openCheckpoint verifies a C2SP signed note carrying a tlog-checkpoint of
// the trusted log: every signature line must be well formed (as
// golang.org/x/mod/sumdb/note's Open requires); every line by a trusted key
// under the log's name must verify; at least one of them must be by a key
// that may vouch for the checkpoint.
function openCheckpoint(text, trust, mayVouch) {
  const bad = (why) => fail('not_in_log', `checkpoint: ${why}`);
  if (/[\x00-\x09\x0b-\x1f]/.test(text)) bad('control characters');
  const split = text.lastIndexOf('\n\n');
  if (split < 0) bad('no signature block after a blank line');
  const body = text.slice(0, split + 1);
  const block = text.slice(split + 2);
  if (block === '' || !block.endsWith('\n')) bad('malformed signature block');
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > 100) bad('more than 100 signature lines');
  const sigs = lines.map((line) => {
    if (!line.startsWith('\u2014 ')) bad('malformed signature line');
    const rest = line.slice(2);
    const sp = rest.indexOf(' ');
    const name = sp < 0 ? rest : rest.slice(0, sp);
    const b64 = sp < 0 ? '' : rest.slice(sp + 1);
    if (!isNoteName(name) || b64 === '' || !STD_BASE64.test(b64)) bad('malformed signature line');
    const raw = Buffer.from(b64, 'base64');
    if (raw.length < 5) bad('malformed signature line');
    return { name, hash: raw.readUInt32BE(0), sig: raw.subarray(4) };
  });
  const origin = body.slice(0, body.indexOf('\n'));
  if (origin !== trust.origin) bad(`the checkpoint is of log ${JSON.stringify(origin)}, but the trusted keys are for log ${JSON.stringify(trust.origin)}`);
  // The key hash names the key in a signature line: SHA-256(name "\n" 0x01 key)[:4].
  const hashes = trust.keys.map((k) => sha256(Buffer.from(origin + '\n'), Buffer.from([1]), k.pub).readUInt32BE(0));
  const msg = Buffer.from(body, 'utf8');
  let vouched = false;
  for (const s of sigs) {
    if (s.name !== origin) continue; // a witness's cosignature, say
    const signers = trust.keys.filter((_, i) => hashes[i] === s.hash);
    if (signers.length === 0) continue;
    if (signers.length > 1) bad('two trusted keys share a key hash');
    if (!ed25519Verify(signers[0].pub, msg, s.sig)) bad(`a signature line by trusted key ${signers[0].id} does not verify`);
    vouched ||= mayVouch(signers[0]);
  }
  if (!vouched) bad(`the checkpoint of "${origin}" is not signed by a trusted key that could have signed it`);
  return parseCheckpointText(body, bad);
}

// parseCheckpointText reads a checkpoint body: origin, canonical decimal
// size, base64 root; any further lines are non-empty extension lines,
// ignored. The empty tree's root is SHA-256("").
function parseCheckpointText(body, bad) {
  const parts = body.slice(0, -1).split('\n');
  if (parts.length < 3 || parts[0] === '') bad('the body needs an origin, a size and a root hash line');
  if (parts.slice(3).includes('')) bad('blank extension line');
  if (!/^(0|[1-9][0-9]*)$/.test(parts[1]) || BigInt(parts[1]) > INT64_MAX) bad(`tree size ${JSON.stringify(parts[1])} is not a decimal number`);
  const root = Buffer.from(parts[2], 'base64');
  if (root.toString('base64') !== parts[2] || root.length !== 32) bad('the root hash is not 32 bytes of base64');
  const size = BigInt(parts[1]);
  if (size === 0n && !root.equals(sha256(Buffer.alloc(0)))) bad('the empty tree with a root other than SHA-256("")');
  return { origin: parts[0], size, root };
}

// ---- command line ----

// readBounded reads at most limit bytes of a file ("-": stdin) and stops
// there, so an endless or huge input costs no more than that.
async function readBounded(path, limit) {
  const stream = path === '-' ? process.stdin : createReadStream(path);
  const chunks = [];
  let n = 0;
  for await (const chunk of stream) {
    chunks.push(chunk);
    n += chunk.length;
    if (n >= limit) break; // leaving the loop closes the stream
  }
  return Buffer.concat(chunks).subarray(0, limit);
}

async function main(argv) {
  const usage = 'usage: node verify.mjs KEYS.json CERT.json [--now RFC3339]   (CERT.json "-" reads stdin)\n';
  const args = [];
  let now = BigInt(Date.now()) * 1000000n;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--now') {
      now = parseTime(argv[++i]);
      if (now === null) {
        process.stderr.write(`verify.mjs: --now wants an RFC 3339 time, e.g. 2026-07-01T00:00:00Z\n${usage}`);
        return 2;
      }
    } else {
      args.push(argv[i]);
    }
  }
  if (args.length !== 2) {
    process.stderr.write(usage);
    return 2;
  }
  let trust;
  try {
    trust = loadKeys(await readBounded(args[0], MAX_SIZE + 1));
  } catch (e) {
    process.stderr.write(`verify.mjs: trusted keys ${args[0]}: ${e.message}; get the operator's keys file\n`);
    return 2;
  }
  let data;
  try {
    data = await readBounded(args[1], MAX_SIZE + 1);
  } catch (e) {
    process.stderr.write(`verify.mjs: reading the certificate: ${e.message}\n`);
    return 2;
  }
  const r = verify(data, trust, now);
  process.stdout.write(`verdict: ${r.verdict}\nreason: ${r.reason}\n`);
  return r.verdict === 'valid' ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
