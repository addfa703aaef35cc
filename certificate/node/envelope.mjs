// envelope.mjs holds what certificates and signed reports share
// (docs/certificate.md): the trusted keys file, the envelope around signed
// payload bytes and its Ed25519 signature (checks 1-11 of "Verifying"), and
// the proof that the operator's log holds a document's event (a C2SP
// signed checkpoint and an RFC 6962 inclusion proof). Hashing and
// signatures are WebCrypto's, so every check that needs them is async.

import { equal, fromBase64, hex, sha256, uint32, utf8 } from './bytes.mjs';
import { INT64_MAX, STR, NUM, checkShape, int, isObject, nullable, optional, parseJSON, parseTime, JNum } from './jsonsubset.mjs';

export const MAX_SIZE = 1 << 20;
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
// The stores a certificate's scope or a report's layer may name, compared as bytes.
export const STORES = ['postgres', 'pinecone'];
const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

// A Failure carries the verdict of the first failed check.
export class Failure extends Error {
  constructor(verdict, reason) {
    super(reason);
    this.verdict = verdict;
  }
}
export const fail = (verdict, reason) => {
  throw new Failure(verdict, reason);
};

// base64 decodes canonical standard base64 (re-encoding gives s back) of
// exactly n bytes, or of any length when n < 0.
function base64(s, n, what) {
  const b = fromBase64(s);
  if (b === null) fail('malformed', `${what}: not canonical standard base64`);
  if (n >= 0 && b.length !== n) fail('malformed', `${what}: ${b.length} bytes, want ${n}`);
  return b;
}

export const isHex256 = (s) => /^[0-9a-f]{64}$/.test(s);
const keyID = async (pub) => 'ed25519:' + hex((await sha256(pub)).subarray(0, 16));

// ed25519Verify checks an Ed25519 signature (RFC 8032) with WebCrypto.
// Only keys loadKeys accepted reach it.
async function ed25519Verify(pub, msg, sig) {
  if (sig.length !== 64) return false;
  try {
    const key = await crypto.subtle.importKey('raw', pub, { name: 'Ed25519' }, false, ['verify']);
    return await crypto.subtle.verify({ name: 'Ed25519' }, key, sig, msg);
  } catch {
    return false; // not a point on the curve
  }
}

// ---- trusted keys ----

const KEYS_FILE = {
  log_origin: STR,
  keys: [{ key_id: STR, public_key: STR, not_before: STR, not_after: optional(STR) }],
};


// The y coordinates (little endian, sign bit clear) of the points of order
// 1, 2, 4 and 8: keys a signature can be forged under.
const SMALL_ORDER_Y = [
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
];

const P = 2n ** 255n - 19n;
const modP = (a) => ((a % P) + P) % P;
function powMod(b, e) {
  let r = 1n;
  for (b = modP(b); e > 0n; e >>= 1n, b = (b * b) % P) if (e & 1n) r = (r * b) % P;
  return r;
}
const D = modP(-121665n * powMod(121666n, P - 2n));

// onCurve: some x satisfies the curve equation for y, found as RFC 8032
// section 5.1.3 decodes: x = u v^3 (u v^7)^((p-5)/8), and v x^2 is u or -u.
function onCurve(y) {
  const u = modP(y * y - 1n);
  const v = modP(D * y * y + 1n);
  const x = modP(u * powMod(v, 3n) * powMod(u * powMod(v, 7n), (P - 5n) / 8n));
  const vx2 = modP(v * x * x);
  return vx2 === u || vx2 === modP(-u);
}

// weakKey says why a public key may not be trusted: not a canonical
// encoding (y not below 2^255-19), of small order, or no point of the
// curve; '' otherwise.
function weakKey(pub) {
  const y = Uint8Array.from(pub);
  y[31] &= 0x7f;
  const le = BigInt('0x' + hex(Uint8Array.from(y).reverse()));
  if (le >= P) return 'is not a canonical encoding';
  if (SMALL_ORDER_Y.includes(hex(y))) return 'is a point of small order';
  if (!onCurve(le)) return 'is not a point of edwards25519';
  return '';
}

// isNoteName is the signed-note rule for key names: non-empty, no plus
// sign, no Unicode White_Space (the set Go's unicode.IsSpace uses) and no
// other control character U+0000-U+001F. DEL and the C1 controls other
// than U+0085 are allowed.
const isNoteName = (s) => s !== '' && !/[\x00-\x1f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000+]/.test(s);

const EPOCH = 0n;

// loadKeys reads a trusted keys file and refuses what the Go verifier
// refuses: the JSON subset, exact members, ids that do not match their
// key, weak keys, duplicates, windows that end before they start.
export async function loadKeys(bytes) {
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
  const keys = [];
  for (const [i, k] of file.keys.entries()) {
    const where = `key ${i + 1} (${k.key_id})`;
    const pub = fromBase64(k.public_key);
    if (pub === null || pub.length !== 32) throw new Error(`${where}: public_key is not 32 bytes of base64`);
    const weak = weakKey(pub);
    if (weak) throw new Error(`${where}: public_key ${weak}`);
    const id = await keyID(pub);
    if (id !== k.key_id) throw new Error(`${where}: key_id does not match its public_key, whose id is ${id}`);
    if (seen.has(k.key_id)) throw new Error(`${where}: listed twice`);
    seen.add(k.key_id);
    const notBefore = parseTime(k.not_before);
    const notAfter = Object.hasOwn(k, 'not_after') ? parseTime(k.not_after) : null;
    if (notBefore < EPOCH || (notAfter !== null && notAfter < EPOCH)) throw new Error(`${where}: not_before and not_after are no earlier than 1970`);
    if (notAfter !== null && notAfter < notBefore) throw new Error(`${where}: not_after is before not_before`);
    keys.push({ id: k.key_id, pub, notBefore, notAfter });
  }
  return { origin: file.log_origin, keys };
}

// ---- the envelope: checks 1-11 ----

// readDocument runs checks 1-2 on the bytes of a certificate or a signed
// report: at most MAX_SIZE bytes, one JSON object of the subset.
export function readDocument(data) {
  if (data.length > MAX_SIZE) fail('oversized', `more than ${MAX_SIZE} bytes; a certificate or report is at most ${MAX_SIZE}`);
  let doc;
  try {
    doc = parseJSON(data);
  } catch (e) {
    fail('malformed', `not JSON of the subset: ${e.message}`);
  }
  if (!isObject(doc)) fail('malformed', 'not a JSON object');
  return doc;
}

// envelopeShape is the envelope of a document whose version member is
// version: lethe_certificate or lethe_report. Its log may be absent or null.
const envelopeShape = (version) => ({
  [version]: NUM,
  payload: STR,
  payload_sha256: STR,
  signature: { alg: STR, key_id: STR, public_key: STR, sig: STR },
  log: nullable({ leaf: STR, index: NUM, proof: [STR], checkpoint: STR }),
});

// openEnvelope runs checks 3-11 on a parsed document (readDocument) whose
// version member is version and which is a noun ("certificate", "report"):
// it returns the signed payload bytes, their hash, the trusted key that
// signed them, and the log section (null when absent).
export async function openEnvelope(doc, trust, version, noun) {
  // 3-6: members, types, values.
  const v = doc[version];
  if (!(v instanceof JNum && v.text === '1')) {
    fail('schema_mismatch', `${version} is ${v instanceof JNum ? v.text : JSON.stringify(v)}; this verifier reads version 1`);
  }
  const shape = checkShape(doc, envelopeShape(version), '');
  if (shape.members) fail('schema_mismatch', 'envelope: ' + shape.members);
  if (shape.types) fail('malformed', 'envelope: ' + shape.types);
  let index = null;
  if (doc.log != null) {
    index = int(doc.log.index);
    if (index === null) fail('malformed', `envelope: log.index ${doc.log.index.text} is not a 64-bit integer`);
  }
  const sig = doc.signature;
  if (sig.alg !== 'ed25519') fail('schema_mismatch', `signature.alg ${JSON.stringify(sig.alg)}; v1 ${noun}s use "ed25519"`);
  const payload = base64(doc.payload, -1, 'payload');
  const publicKey = base64(sig.public_key, 32, 'signature.public_key');
  const signature = base64(sig.sig, 64, 'signature.sig');
  let log = null;
  if (doc.log != null) {
    log = {
      leaf: base64(doc.log.leaf, -1, 'log.leaf'),
      proof: doc.log.proof.map((p, i) => base64(p, 32, `log.proof[${i}]`)),
      index,
      checkpoint: doc.log.checkpoint,
    };
  }
  if (!isHex256(doc.payload_sha256)) fail('malformed', 'payload_sha256: want 64 lowercase hex digits');
  if (log && log.index < 0n) fail('malformed', `log.index ${log.index} is negative`);

  // 7-11: key and signature, before the payload is read.
  const embeddedID = await keyID(publicKey);
  if (sig.key_id !== embeddedID) fail('key_id_mismatch', `key_id ${sig.key_id}, but the embedded public key's id is ${embeddedID}`);
  const trusted = trust.keys.find((k) => k.id === sig.key_id);
  if (!trusted) fail('unknown_key', `key ${sig.key_id} is not in the trusted keys`);
  if (!equal(trusted.pub, publicKey)) fail('key_mismatch', `the embedded public key differs from the trusted key ${sig.key_id}`);
  const payloadSHA256 = hex(await sha256(payload));
  if (payloadSHA256 !== doc.payload_sha256) fail('payload_tampered', `payload hashes to ${payloadSHA256}, not to payload_sha256`);
  if (!(await ed25519Verify(trusted.pub, payload, signature))) fail('bad_signature', `the signature is not ${sig.key_id}'s signature of the payload`);
  return { payload, payloadSHA256, trusted, log };
}

// inWindow: the trusted key may sign at instant t (nanoseconds).
export const inWindow = (k, t) => t >= k.notBefore && (k.notAfter === null || t <= k.notAfter);

// ---- the log ----

// checkInclusion accepts the log section of a document signed at instant
// signedAt whose event is the leaf want (bytes compared exactly, since
// events have one spelling): a checkpoint of the trusted log, signed by a
// trusted key whose window had not ended at signedAt (a checkpoint holding
// the event was signed after the document), and an inclusion proof from
// the leaf at its index to the checkpoint's root. It returns the checkpoint.
export async function checkInclusion(log, trust, signedAt, want) {
  if (!equal(log.leaf, utf8(want))) fail('not_in_log', `log.leaf is not this document's event; want ${want}`);
  const cp = await openCheckpoint(log.checkpoint, trust, (k) => k.notAfter === null || k.notAfter >= signedAt);
  if (log.index >= cp.size) fail('not_in_log', `log.index ${log.index} is beyond the checkpoint's tree of ${cp.size} leaves`);
  const root = await rootFromInclusionProof(log.index, cp.size, await sha256(LEAF, log.leaf), log.proof);
  if (!root || !equal(root, cp.root)) fail('not_in_log', 'the inclusion proof does not lead to the checkpoint root');
  return cp;
}

// The RFC 6962 domain separation prefixes of leaf and interior node hashes.
const LEAF = new Uint8Array([0]);
const NODE = new Uint8Array([1]);
// The signed-note algorithm byte of Ed25519 keys.
const NOTE_ED25519 = new Uint8Array([1]);

// from a leaf hash up to the root it implies, or null if the path does not
// fit a tree of this size.
async function rootFromInclusionProof(index, size, leafHash, proof) {
  let fn = index, sn = size - 1n, r = leafHash;
  for (const p of proof) {
    if (sn === 0n) return null;
    if ((fn & 1n) === 1n || fn === sn) {
      r = await sha256(NODE, p, r);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = await sha256(NODE, r, p);
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
async function openCheckpoint(text, trust, mayVouch) {
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
    const raw = fromBase64(b64);
    // Canonical base64 only: stray bits after the last byte are refused.
    if (raw === null || raw.length < 5) bad('malformed signature line');
    return { name, hash: uint32(raw), sig: raw.subarray(4) };
  });
  const origin = body.slice(0, body.indexOf('\n'));
  if (origin !== trust.origin) bad(`the checkpoint is of log ${JSON.stringify(origin)}, but the trusted keys are for log ${JSON.stringify(trust.origin)}`);
  // The key hash names the key in a signature line: SHA-256(name "\n" 0x01 key)[:4].
  const hashes = [];
  for (const k of trust.keys) hashes.push(uint32(await sha256(utf8(origin + '\n'), NOTE_ED25519, k.pub)));
  const msg = utf8(body);
  let vouched = false;
  for (const s of sigs) {
    if (s.name !== origin) continue; // a witness's cosignature, say
    const signers = trust.keys.filter((_, i) => hashes[i] === s.hash);
    if (signers.length === 0) continue;
    if (signers.length > 1) bad('two trusted keys share a key hash');
    if (!(await ed25519Verify(signers[0].pub, msg, s.sig))) bad(`a signature line by trusted key ${signers[0].id} does not verify`);
    vouched ||= mayVouch(signers[0]);
  }
  if (!vouched) bad(`the checkpoint of "${origin}" is not signed by a trusted key that could have signed it`);
  return parseCheckpointText(body, bad, await sha256());
}

// parseCheckpointText reads a checkpoint body: origin, canonical decimal
// size, base64 root; any further lines are non-empty extension lines,
// ignored. The empty tree's root is SHA-256(""), emptyRoot.
function parseCheckpointText(body, bad, emptyRoot) {
  const parts = body.slice(0, -1).split('\n');
  if (parts.length < 3 || parts[0] === '') bad('the body needs an origin, a size and a root hash line');
  if (parts.slice(3).includes('')) bad('blank extension line');
  if (!/^(0|[1-9][0-9]*)$/.test(parts[1]) || BigInt(parts[1]) > INT64_MAX) bad(`tree size ${JSON.stringify(parts[1])} is not a decimal number`);
  const root = fromBase64(parts[2]);
  if (root === null || root.length !== 32) bad('the root hash is not 32 bytes of base64');
  const size = BigInt(parts[1]);
  if (size === 0n && !equal(root, emptyRoot)) bad('the empty tree with a root other than SHA-256("")');
  return { origin: parts[0], size, root };
}
