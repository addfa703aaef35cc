// bytes.mjs holds the byte handling the verifier needs, written against
// what every JavaScript host has (Uint8Array, TextEncoder, WebCrypto's
// crypto.subtle) and nothing of Node's, so that the same modules verify in
// Node (verify.mjs) and in a browser (certificate/webverify).

const encoder = new TextEncoder();

// utf8 is the UTF-8 encoding of a string.
export const utf8 = (s) => encoder.encode(s);

// concat joins byte arrays.
export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// equal: the same bytes.
export const equal = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

// compare orders byte arrays as Go's bytes.Compare (and Node's
// Buffer.compare) do: -1, 0 or 1.
export function compare(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

// hex is the lowercase hex spelling of bytes.
export const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

// uint32 reads the big-endian unsigned 32-bit integer at the start of b.
export const uint32 = (b) => ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

// base64 is the standard, padded base64 spelling of bytes (RFC 4648
// section 4).
export function base64(b) {
  let out = '';
  for (let i = 0; i < b.length; i += 3) {
    const n = (b[i] << 16) | ((b[i + 1] ?? 0) << 8) | (b[i + 2] ?? 0);
    out += ALPHABET[n >> 18] + ALPHABET[(n >> 12) & 63];
    out += i + 1 < b.length ? ALPHABET[(n >> 6) & 63] : '=';
    out += i + 2 < b.length ? ALPHABET[n & 63] : '=';
  }
  return out;
}

// fromBase64 decodes canonical standard base64: the only spelling base64
// gives for the bytes (padding present, no stray bits after the last
// byte, nothing outside the alphabet), or returns null.
export function fromBase64(s) {
  if (typeof s !== 'string' || s.length % 4 !== 0) return null;
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  const out = new Uint8Array((s.length / 4) * 3 - pad);
  let at = 0;
  for (let i = 0; i < s.length; i += 4) {
    let n = 0;
    for (let j = 0; j < 4; j++) {
      const c = s[i + j];
      const last = i + 4 === s.length;
      const v = c === '=' && last && j >= 4 - pad ? 0 : ALPHABET.indexOf(c);
      if (v < 0) return null;
      n = (n << 6) | v;
    }
    for (let j = 0; j < 3 && at < out.length; j++) out[at++] = (n >> (16 - 8 * j)) & 255;
  }
  return base64(out) === s ? out : null;
}

// fromHex decodes an even number of hex digits, or returns null.
export function fromHex(s) {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(s)) return null;
  return Uint8Array.from(s.match(/../g) ?? [], (h) => parseInt(h, 16));
}

// sha256 is the SHA-256 digest of the parts, joined.
export async function sha256(...parts) {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', concat(...parts)));
}
