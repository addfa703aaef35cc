// jsonsubset.mjs reads the JSON and RFC 3339 subsets of docs/certificate.md
// ("JSON", "Times"), which every Lethe document is written in, and checks a
// parsed value against the shape its members must have. certificate.mjs,
// report.mjs and envelope.mjs share it.

import { compare, utf8 } from './bytes.mjs';

export const INT64_MAX = 2n ** 63n - 1n;
const MAX_DEPTH = 64;

// ---- JSON: the subset of docs/certificate.md ("JSON") ----

// A JSON number keeps its text, so that integers are read from what was
// written (2.0 is not an integer) and nothing is rounded.
export class JNum {
  constructor(text) {
    this.text = text;
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

// parseJSON reads UTF-8 bytes as one JSON value in the subset: RFC 8259,
// no byte order mark, no escaped lone surrogate, no member name twice in
// one object, nesting at most MAX_DEPTH. It throws an Error saying why not.
export function parseJSON(bytes) {
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    // Each host words TextDecoder's error its own way; the reason is the
    // verifier's, the same in every host (this is Node's wording).
    throw new Error('The encoded data was not valid for encoding utf-8');
  }
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
export function parseTime(s) {
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

export const STR = 'a string';
export const NUM = 'a number';
export const BOOL = 'a boolean';
// An optional member may be absent; a nullable one may also be null.
export const optional = (shape) => ({ optional: shape });
export const nullable = (shape) => ({ optional: shape, nullable: true });

// isObject: a JSON object, as parseJSON returns it.
export const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof JNum);

// checkShape walks value against shape. Like the Go verifier, an unknown or
// missing member (schema_mismatch) outranks a member of the wrong JSON type
// (malformed); integers and times are read later. It returns what it found:
// {members, types}, the first problem of each kind.
export function checkShape(value, shape, path, found = {}) {
  if (shape.optional) {
    if (value === null && shape.nullable) return found;
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
  if (!isObject(value)) {
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
  const unknown = Object.keys(value).filter((m) => !Object.hasOwn(shape, m)).sort(byUTF8);
  if (unknown.length > 0) found.members = `unknown member "${prefix}${unknown[0]}"`;
  return found;
}

// byUTF8 orders strings by their UTF-8 bytes, as Go compares strings.
const byUTF8 = (a, b) => compare(utf8(a), utf8(b));

// int reads a JSON number written as an integer (no fraction, no
// exponent) that fits in 64 bits, as a BigInt; null if it is not one.
export function int(n) {
  if (!/^-?(?:0|[1-9][0-9]*)$/.test(n.text)) return null;
  const v = BigInt(n.text);
  return v >= -INT64_MAX - 1n && v <= INT64_MAX ? v : null;
}
