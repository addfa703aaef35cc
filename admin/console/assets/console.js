// The console's one script: it follows a running forget, and checks the
// transparency log's consistency with the checkpoint this browser saw
// last. Pages work without it (a running forget's page refreshes itself).
'use strict';

// followProgress re-reads a running request's page every 1.5 s and puts
// its new content in place, until the forget has ended.
function followProgress() {
  const progress = document.getElementById('progress');
  if (!progress || !progress.dataset.running) return;
  let polls = 0; // how often the page was read again, on <main data-polls>
  const tick = async () => {
    let html;
    try {
      const res = await fetch(location.href, { credentials: 'same-origin', cache: 'no-store', redirect: 'error' });
      if (!res.ok) throw new Error('status ' + res.status);
      html = await res.text();
    } catch (e) {
      progress.insertAdjacentHTML('beforeend', '<p class="problem">Lost touch with the server; reload the page to follow the forget.</p>');
      return;
    }
    const next = new DOMParser().parseFromString(html, 'text/html').querySelector('main');
    next.dataset.polls = String(++polls);
    document.querySelector('main').replaceWith(document.adoptNode(next));
    const still = document.getElementById('progress');
    if (still && still.dataset.running) setTimeout(tick, 1500);
  };
  setTimeout(tick, 1500);
}

// --- RFC 9162 consistency proofs, with WebCrypto's SHA-256 ---

function fromBase64(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function toBase64(bytes) {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

// nodeHash is RFC 9162's interior node hash: SHA-256(0x01 || left || right).
async function nodeHash(left, right) {
  const buf = new Uint8Array(1 + left.length + right.length);
  buf[0] = 1;
  buf.set(left, 1);
  buf.set(right, 1 + left.length);
  return new Uint8Array(await crypto.subtle.digest('SHA-256', buf));
}

function equalBytes(a, b) {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

// Sizes stay below 2^53; halving by division keeps them exact where the
// 32-bit shift operators would not.
const half = (n) => Math.floor(n / 2);
const odd = (n) => n % 2 === 1;

function isPowerOfTwo(n) {
  while (n > 1 && !odd(n)) n = half(n);
  return n === 1;
}

// checkConsistency is RFC 9162 section 2.1.4.2: does the tree of size
// second with root secondRoot extend the tree of size first with root
// firstRoot, by proof? It throws saying why not.
async function checkConsistency(first, firstRoot, second, secondRoot, proof) {
  if (first === second) {
    if (proof.length !== 0 || !equalBytes(firstRoot, secondRoot)) throw new Error('same size, different root');
    return;
  }
  if (first === 0) return; // the empty tree is a prefix of every tree
  if (proof.length === 0) throw new Error('empty proof');
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : proof;
  let fn = first - 1, sn = second - 1;
  while (odd(fn)) { fn = half(fn); sn = half(sn); }
  let fr = path[0], sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) throw new Error('proof too long');
    if (odd(fn) || fn === sn) {
      fr = await nodeHash(c, fr);
      sr = await nodeHash(c, sr);
      while (!odd(fn) && fn !== 0) { fn = half(fn); sn = half(sn); }
    } else {
      sr = await nodeHash(sr, c);
    }
    fn = half(fn); sn = half(sn);
  }
  if (sn !== 0) throw new Error('proof too short');
  if (!equalBytes(fr, firstRoot)) throw new Error('the proof does not lead to the root you saw');
  if (!equalBytes(sr, secondRoot)) throw new Error('the proof does not lead to the latest root');
}

// checkLog compares the page's checkpoint with the one this browser kept,
// and keeps the page's when the log only grew.
async function checkLog() {
  const cp = document.getElementById('checkpoint');
  const out = document.getElementById('consistency');
  if (!cp || !out) return;
  const key = 'lethe.console.checkpoint:' + cp.dataset.origin;
  const now = { size: Number(cp.dataset.size), root: cp.dataset.root };
  const show = (state, text) => { out.dataset.state = state; out.textContent = text; };
  let seen = null;
  try { seen = JSON.parse(localStorage.getItem(key)); } catch (e) { seen = null; }
  if (!seen || typeof seen.size !== 'number' || typeof seen.root !== 'string') {
    localStorage.setItem(key, JSON.stringify(now));
    show('first', 'This browser had not seen this log before: its checkpoint (' + now.size + ' records) is kept for your next visit.');
    return;
  }
  if (seen.size > now.size) {
    show('inconsistent', 'INCONSISTENT: this browser saw the log at ' + seen.size + ' records, and it now has ' + now.size + ': records were removed. Keep both checkpoints and report it.');
    return;
  }
  try {
    let hashes = [];
    if (seen.size !== now.size && seen.size !== 0) {
      const res = await fetch(cp.dataset.proofs + '?old=' + seen.size + '&new=' + now.size,
        { credentials: 'same-origin', headers: { Accept: 'application/json' } });
      if (!res.ok) {
        show('error', 'Could not check the log: the server answered ' + res.status + ' to the proof request' +
          (res.status === 401 ? ' (your session ended; sign in again)' : '') + '. The checkpoint you saw is still kept.');
        return;
      }
      hashes = ((await res.json()).hashes || []).map(fromBase64);
    }
    await checkConsistency(seen.size, fromBase64(seen.root), now.size, fromBase64(now.root), hashes);
  } catch (e) {
    show('inconsistent', 'INCONSISTENT: the log does not extend the checkpoint this browser saw (' + seen.size + ' records): ' + e.message + '. Keep both checkpoints and report it.');
    return;
  }
  localStorage.setItem(key, JSON.stringify(now));
  show('consistent', 'Consistent: the log only grew since this browser saw it at ' + seen.size + ' records (now ' + now.size + '); the proof was checked here.');
}

document.addEventListener('DOMContentLoaded', () => {
  followProgress();
  checkLog();
});
