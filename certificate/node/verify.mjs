#!/usr/bin/env node
// verify.mjs verifies a Lethe deletion certificate, version 1
// (docs/certificate.md), independently of the Go code: it reads the same
// bytes and runs the same checks in the same order, using only node:crypto
// and node:fs, so an auditor can read it in one sitting.
//
//   node verify.mjs KEYS.json CERT.json [--now RFC3339]
//
// It prints "verdict: <verdict>" and a reason. The exit status is 0 only for
// "valid", 1 for any other verdict, and 2 when it cannot run (usage, an
// unreadable or invalid keys file).

import { createHash, createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { readFileSync } from 'node:fs';

const MAX_SIZE = 1 << 20;
const ENVELOPE_VERSION = 1;
const SCHEMA_V1 = 'lethe.certificate/v1';
const INT64_MAX = 2n ** 63n - 1n;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

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

// Shapes: the members each JSON object must have, exactly, and their types.
const STR = 'a string', NUM = 'a number', INT = 'an integer', BOOL = 'a boolean', TIME = 'an RFC 3339 time';
const optional = (shape) => ({ optional: shape });

const ENVELOPE = {
  lethe_certificate: NUM,
  payload: STR,
  payload_sha256: STR,
  signature: { alg: STR, key_id: STR, public_key: STR, sig: STR },
  log: optional({ leaf: STR, index: INT, proof: [STR], checkpoint: STR }),
};

const PAYLOAD = {
  schema: STR,
  request_id: STR,
  issued_at: TIME,
  valid_until: TIME,
  subject: { hmac_sha256: STR, commitment: STR },
  scope: [{ store: STR, table: STR }],
  layers: [{
    store: STR, table: STR, requested: INT, deleted: INT, residual: INT,
    verified_absent: BOOL, verify_method: STR, verify_queries: [STR],
  }],
  deleted_ids: { count: INT, root: STR },
  rules_sha256: STR,
  tool: STR,
  claim: { statement: STR, covers: [STR], excludes: [STR] },
};

// checkShape walks value against shape. Like the Go verifier, an unknown or
// missing member (schema_mismatch) outranks a member of the wrong JSON type
// (malformed); integers and times are only checked to be numbers and
// strings here, and read later.
function checkShape(value, shape, path, found = {}) {
  if (shape.optional) {
    if (value === null) return found;
    shape = shape.optional;
  }
  const name = path || 'the value';
  if (typeof shape === 'string') {
    const want = shape === NUM || shape === INT ? 'number' : shape === BOOL ? 'boolean' : 'string';
    if (typeof value !== want) found.types ??= `${name} is not ${shape}`;
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
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    found.types ??= `${name} is not an object`;
    return found;
  }
  const prefix = path ? path + '.' : '';
  for (const [member, s] of Object.entries(shape)) {
    if (!Object.hasOwn(value, member)) {
      if (!s.optional) found.members ??= `member "${prefix}${member}" is missing`;
      continue;
    }
    checkShape(value[member], s, prefix + member, found);
  }
  if (found.members) return found;
  const unknown = Object.keys(value).filter((m) => !Object.hasOwn(shape, m)).sort();
  if (unknown.length > 0) found.members = `unknown member "${prefix}${unknown[0]}"`;
  return found;
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

// parseTime reads an RFC 3339 time as milliseconds since the epoch, or NaN.
const parseTime = (s) => (typeof s === 'string' && RFC3339.test(s) ? Date.parse(s) : NaN);

function ed25519Verify(pub, msg, sig) {
  if (sig.length !== 64) return false;
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: pub.toString('base64url') }, format: 'jwk' });
    return cryptoVerify(null, msg, key, sig);
  } catch {
    return false; // not a point on the curve
  }
}

// loadKeys reads a trusted keys file and refuses what the Go verifier
// refuses: unknown members, ids that do not match their key, duplicates.
function loadKeys(text) {
  const file = JSON.parse(text);
  const found = checkShape(file, { keys: [{ key_id: STR, public_key: STR, not_before: TIME, not_after: optional(TIME) }] }, '');
  if (found.members || found.types) throw new Error(found.members || found.types);
  if (file.keys.length === 0) throw new Error('the set is empty');
  const seen = new Set();
  return file.keys.map((k, i) => {
    const where = `key ${i + 1} (${k.key_id})`;
    const pub = Buffer.from(k.public_key, 'base64');
    if (pub.toString('base64') !== k.public_key || pub.length !== 32) throw new Error(`${where}: public_key is not 32 bytes of base64`);
    if (keyID(pub) !== k.key_id) throw new Error(`${where}: key_id does not match its public_key, whose id is ${keyID(pub)}`);
    if (seen.has(k.key_id)) throw new Error(`${where}: listed twice`);
    seen.add(k.key_id);
    const notBefore = parseTime(k.not_before);
    const notAfter = k.not_after == null ? Infinity : parseTime(k.not_after);
    if (Number.isNaN(notBefore) || Number.isNaN(notAfter)) throw new Error(`${where}: not_before or not_after is not RFC 3339`);
    if (notAfter < notBefore) throw new Error(`${where}: not_after is before not_before`);
    return { id: k.key_id, pub, notBefore, notAfter };
  });
}

// verify returns {verdict, reason}; the checks and their order are the
// table in docs/certificate.md, "Verifying".
function verify(data, keys, now) {
  try {
    return verifyOrThrow(data, keys, now);
  } catch (e) {
    if (e instanceof Failure) return { verdict: e.verdict, reason: e.message };
    return { verdict: 'malformed', reason: `unreadable: ${e.message}` };
  }
}

function verifyOrThrow(data, keys, now) {
  // 1–6: the envelope.
  if (data.length > MAX_SIZE) fail('oversized', `${data.length} bytes; a certificate is at most ${MAX_SIZE}`);
  let env;
  try {
    env = JSON.parse(data.toString('utf8'));
  } catch (e) {
    fail('malformed', `not JSON: ${e.message}`);
  }
  if (env === null || typeof env !== 'object' || Array.isArray(env)) fail('malformed', 'not a JSON object');
  if (env.lethe_certificate !== ENVELOPE_VERSION) {
    fail('schema_mismatch', `lethe_certificate is ${JSON.stringify(env.lethe_certificate)}; this verifier reads version ${ENVELOPE_VERSION}`);
  }
  const shape = checkShape(env, ENVELOPE, '');
  if (shape.members) fail('schema_mismatch', 'envelope: ' + shape.members);
  if (shape.types) fail('malformed', 'envelope: ' + shape.types);
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
      index: env.log.index,
      checkpoint: env.log.checkpoint,
    };
  }
  if (!isHex256(env.payload_sha256)) fail('malformed', 'payload_sha256: want 64 lowercase hex digits');
  if (log && !(Number.isInteger(log.index) && log.index >= 0 && BigInt(log.index) <= INT64_MAX)) {
    fail('malformed', `log.index ${log.index} is not a non-negative integer`);
  }

  // 7–11: key and signature.
  if (sig.key_id !== keyID(publicKey)) fail('key_id_mismatch', `key_id ${sig.key_id}, but the embedded public key's id is ${keyID(publicKey)}`);
  const trusted = keys.find((k) => k.id === sig.key_id);
  if (!trusted) fail('unknown_key', `key ${sig.key_id} is not in the trusted keys`);
  if (!trusted.pub.equals(publicKey)) fail('key_mismatch', `the embedded public key differs from the trusted key ${sig.key_id}`);
  const payloadSHA256 = sha256(payload).toString('hex');
  if (payloadSHA256 !== env.payload_sha256) fail('payload_tampered', `payload hashes to ${payloadSHA256}, not to payload_sha256`);
  if (!ed25519Verify(trusted.pub, payload, signature)) fail('bad_signature', `the signature is not ${sig.key_id}'s signature of the payload`);

  // 12–13: the payload, only now that its bytes are known to be signed.
  let p;
  try {
    p = JSON.parse(payload.toString('utf8'));
  } catch (e) {
    fail('malformed', `payload: not JSON: ${e.message}`);
  }
  if (p === null || typeof p !== 'object' || Array.isArray(p)) fail('malformed', 'payload: not a JSON object');
  if (p.schema !== SCHEMA_V1) fail('schema_mismatch', `payload: schema is ${JSON.stringify(p.schema)}; this verifier reads ${SCHEMA_V1}`);
  const pshape = checkShape(p, PAYLOAD, '');
  if (pshape.members) fail('schema_mismatch', 'payload: ' + pshape.members);
  if (pshape.types) fail('malformed', 'payload: ' + pshape.types);
  const ints = [p.deleted_ids.count, ...p.layers.flatMap((l) => [l.requested, l.deleted, l.residual])];
  if (!ints.every((n) => Number.isInteger(n) && Math.abs(n) <= 2 ** 63)) fail('malformed', 'payload: a count is not an integer');
  const issuedAt = parseTime(p.issued_at);
  const validUntil = parseTime(p.valid_until);
  if (Number.isNaN(issuedAt) || Number.isNaN(validUntil)) fail('malformed', 'payload: issued_at or valid_until is not RFC 3339');

  // 14–15: time.
  if (issuedAt < trusted.notBefore || issuedAt > trusted.notAfter) {
    fail('unknown_key', `issued_at ${p.issued_at} is outside the window of key ${sig.key_id}`);
  }
  if (now > validUntil) fail('expired', `valid until ${p.valid_until}`);

  // 16: the log.
  if (!log) fail('not_in_log', 'the certificate has no log section');
  if (!REQUEST_ID.test(p.request_id)) fail('not_in_log', 'no log event can name this request_id');
  // Event values need no JSON escaping, so the leaf has exactly one spelling.
  const want = `{"v":1,"event":"forget.completed","request_id":"${p.request_id}","certificate_sha256":"${payloadSHA256}"}`;
  if (!log.leaf.equals(Buffer.from(want))) fail('not_in_log', `log.leaf is not this certificate's event; want ${want}`);
  // A checkpoint containing the certificate was signed after its issuance:
  // keys retired before then cannot vouch for it.
  const cp = openCheckpoint(log.checkpoint, keys.filter((k) => k.notAfter >= issuedAt));
  const index = BigInt(log.index);
  if (index >= cp.size) fail('not_in_log', `log.index ${index} is beyond the checkpoint's tree of ${cp.size} leaves`);
  const root = rootFromInclusionProof(index, cp.size, sha256(Buffer.from([0]), log.leaf), log.proof);
  if (!root || !root.equals(cp.root)) fail('not_in_log', 'the inclusion proof does not lead to the checkpoint root');
  return {
    verdict: 'valid',
    reason: `request ${p.request_id}, signed by ${sig.key_id} at ${p.issued_at}, valid until ${p.valid_until}; leaf ${index} of ${cp.size} in log "${cp.origin}"`,
  };
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

// isNoteName is the signed-note rule for key names: non-empty, no plus
// sign, no Unicode White_Space (the set Go's unicode.IsSpace uses).
const isNoteName = (s) => s !== '' && !/[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000+]/.test(s);

// openCheckpoint verifies a C2SP signed note carrying a tlog-checkpoint,
// following golang.org/x/mod/sumdb/note's Open: every signature line must be
// well formed; the first line per trusted key must verify; at least one must.
function openCheckpoint(text, keys) {
  const bad = (why) => fail('not_in_log', `checkpoint: ${why}`);
  const nl = text.indexOf('\n');
  if (nl < 0) bad('a single line; want a signed note');
  const origin = text.slice(0, nl);
  if (!isNoteName(origin)) bad(`origin ${JSON.stringify(origin)} is not a valid note name`);
  if (/[\x00-\x09\x0b-\x1f]/.test(text)) bad('control characters');
  const msg = Buffer.from(text, 'utf8');
  const split = msg.lastIndexOf('\n\n');
  if (split < 0) bad('no signature block');
  const body = msg.subarray(0, split + 1);
  const sigs = msg.subarray(split + 2).toString('utf8');
  if (sigs === '' || !sigs.endsWith('\n')) bad('malformed signature block');
  // The key hash names the key in a signature line: SHA-256(name "\n" 0x01 key)[:4].
  const verifiers = keys.map((k) => ({ key: k, hash: sha256(Buffer.from(origin + '\n'), Buffer.from([1]), k.pub).readUInt32BE(0) }));
  const seen = new Set();
  let verified = 0;
  const lines = sigs.slice(0, -1).split('\n');
  for (const [n, line] of lines.entries()) {
    if (!line.startsWith('\u2014 ')) bad('malformed signature line');
    const rest = line.slice(2);
    const sp = rest.indexOf(' ');
    const name = sp < 0 ? rest : rest.slice(0, sp);
    const b64 = sp < 0 ? '' : rest.slice(sp + 1);
    if (!isNoteName(name) || b64 === '' || !STD_BASE64.test(b64)) bad('malformed signature line');
    const raw = Buffer.from(b64, 'base64');
    if (raw.length < 5) bad('malformed signature line');
    if (n + 1 > 100) bad('too many signatures');
    const hash = raw.readUInt32BE(0);
    const matches = name === origin ? verifiers.filter((v) => v.hash === hash) : [];
    if (matches.length === 0) continue; // someone else's signature
    if (matches.length > 1) bad('two trusted keys share a key hash');
    if (seen.has(hash)) continue; // only the first signature per key counts
    seen.add(hash);
    if (!ed25519Verify(matches[0].key.pub, body, raw.subarray(4))) bad(`invalid signature by ${matches[0].key.id}`);
    verified++;
  }
  if (verified === 0) bad(`the checkpoint of "${origin}" is not signed by a trusted key`);
  const parts = body.toString('utf8').split('\n');
  if (parts.length < 4 || parts[0] === '') bad('the body needs an origin, a size and a root hash line');
  if (!/^(0|[1-9][0-9]*)$/.test(parts[1]) || BigInt(parts[1]) > INT64_MAX) bad(`tree size ${JSON.stringify(parts[1])} is not a decimal number`);
  const root = Buffer.from(parts[2], 'base64');
  if (root.toString('base64') !== parts[2] || root.length !== 32) bad('the root hash is not 32 bytes of base64');
  return { origin, size: BigInt(parts[1]), root };
}

function main(argv) {
  const usage = 'usage: node verify.mjs KEYS.json CERT.json [--now RFC3339]\n';
  const args = [];
  let now = Date.now();
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--now') {
      now = parseTime(argv[++i]);
      if (Number.isNaN(now)) {
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
  let keys;
  try {
    keys = loadKeys(readFileSync(args[0], 'utf8'));
  } catch (e) {
    process.stderr.write(`verify.mjs: trusted keys ${args[0]}: ${e.message}; get the operator's keys file\n`);
    return 2;
  }
  let data;
  try {
    data = readFileSync(args[1]);
  } catch (e) {
    process.stderr.write(`verify.mjs: reading the certificate: ${e.message}\n`);
    return 2;
  }
  const r = verify(data, keys, now);
  process.stdout.write(`verdict: ${r.verdict}\nreason: ${r.reason}\n`);
  return r.verdict === 'valid' ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));
