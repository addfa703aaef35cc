// page.mjs drives the browser verifier (verify.html): it reads the files
// the auditor picks or drops, runs the verifier's own modules
// (certificate/node/document.mjs, the ones `node verify.mjs` runs) on
// their bytes, and shows the verdict, the physical line of a v2 or v3
// certificate, the horizon line of a v3
// certificate, the reason and what the document
// states. Addenda picked beside a certificate (its request's re-scan and
// replay reports, docs/certificate.md "Addenda") are folded in as
// `lethe-proxy verify --addendum` folds them: the physical line gets each
// layer's newest re-scan, a replay line says when the forget was last
// re-applied after a restore, and a line per addendum says what became of
// it. Nothing leaves the page: it makes no request (its content
// security policy forbids every one), and every text it shows from a file
// is set as text, never as markup.

import { MAX_SIZE, isReport, loadKeys, parseTime, verify, verifyWithAddenda } from '../node/document.mjs';
import { JNum, isObject, parseJSON } from '../node/jsonsubset.mjs';

const $ = (id) => document.getElementById(id);

// The inputs: the last file picked or dropped for each role, and the
// addenda (a list) picked or dropped last.
const chosen = { keys: null, document: null, addenda: [] };
// Each verification gets a number; only the latest one is shown.
let runs = 0;

// readFile reads at most limit bytes of a file, as verify.mjs's
// readBounded does, so a huge file costs no more than that.
const readFile = async (file, limit) => new Uint8Array(await file.slice(0, limit).arrayBuffer());

// show puts a state on the result and fills its lines.
function show(state, { verdict = '', physical, horizon, replay, addenda = [], reason = '', what = '' } = {}) {
  const result = $('result');
  result.dataset.state = state;
  result.dataset.verdict = verdict;
  $('verdict').textContent = verdict ? `verdict: ${verdict}` : '';
  // A valid v2 certificate's physical line, beside the verdict as the
  // command-line verifiers print it.
  $('physical').textContent = physical === undefined ? '' : `physical: ${physical}`;
  // A valid v3 certificate's horizon line, after the physical line.
  $('horizon').textContent = horizon === undefined ? '' : `horizon: ${horizon}`;
  // Folded addenda: when the forget was last re-applied after a restore,
  // and what became of each addendum.
  $('replay').textContent = replay === undefined ? '' : `replay: ${replay}`;
  $('folded').replaceChildren(...addenda.map((line) => {
    const li = document.createElement('li');
    li.textContent = line;
    return li;
  }));
  $('reason').textContent = reason;
  $('what').textContent = what;
}

// instant reads the "verify as of" field: nanoseconds since the epoch,
// now when empty, or null when it is no time of the subset.
function instant() {
  const text = $('now').value.trim();
  if (text === '') return BigInt(Date.now()) * 1000000n;
  return parseTime(text);
}

async function run() {
  const run = ++runs;
  const current = () => run === runs;
  $('evidence').replaceChildren();
  if (!globalThis.crypto?.subtle) {
    show('error', { reason: 'This browser gives the page no WebCrypto: a page served over plain HTTP from another machine is not a secure context. Open it over HTTPS or from localhost, or save it and open the file.' });
    return;
  }
  if (!chosen.keys || !chosen.document) {
    show('idle', { reason: chosen.keys ? 'Now pick the certificate or report.' : 'Pick the trusted keys file (the operator publishes it; pin it) and the certificate or report.' });
    return;
  }
  const now = instant();
  if (now === null) {
    show('error', { reason: '"Verify as of" wants an RFC 3339 time, e.g. 2026-07-01T00:00:00Z, or nothing for now.' });
    return;
  }
  const requireLog = $('require-log').checked;
  const addendaNames = chosen.addenda.map((f) => f.name).join(', ');
  const what = `${chosen.document.name} against ${chosen.keys.name}, as of ${$('now').value.trim() || 'now'}${requireLog ? ', log required' : ''}` +
    (addendaNames ? `, with addenda ${addendaNames}` : '');
  show('working', { reason: 'Verifying…', what });
  let trust;
  try {
    trust = await loadKeys(await readFile(chosen.keys, MAX_SIZE + 1));
  } catch (e) {
    if (current()) show('keys-refused', { reason: `The trusted keys file is refused: ${e.message}; get the operator's keys file.`, what });
    return;
  }
  const data = await readFile(chosen.document, MAX_SIZE + 1);
  if (chosen.addenda.length > 0) {
    if (isReport(data)) {
      if (current()) show('error', { reason: 'Addenda go with a certificate; this is a signed report. Pick the certificate of the request, or remove the addenda.', what });
      return;
    }
    const addenda = [];
    for (const f of chosen.addenda) addenda.push({ name: f.name, data: await readFile(f, MAX_SIZE + 1) });
    const r = await verifyWithAddenda(data, addenda, trust, now);
    if (!current()) return;
    const lines = r.addenda.map((a) => `addendum ${a.name}: ${a.verdict}: ${a.reason}`);
    if (r.verdict !== 'valid') lines.push('addenda: none folded: the certificate is not valid');
    show('verdict', { verdict: r.verdict, physical: r.physical, horizon: r.horizon, replay: r.replay, addenda: lines, reason: r.reason, what });
    $('evidence').replaceChildren(...evidence(data, r.verdict === 'valid'));
    return;
  }
  const r = await verify(data, trust, now, requireLog);
  if (!current()) return;
  show('verdict', { verdict: r.verdict, physical: r.physical, horizon: r.horizon, reason: r.reason, what });
  $('evidence').replaceChildren(...evidence(data, r.verdict === 'valid'));
}

// ---- what the document states ----

// evidence renders what a document states: its envelope's key and log
// section and its signed payload, exactly as written. It is not evidence
// unless the verdict is valid, and says so.
function evidence(data, valid) {
  const out = [];
  const note = document.createElement('p');
  note.className = valid ? 'note' : 'note warn';
  note.textContent = valid
    ? 'What the certificate or report states, as signed:'
    : 'What the document states. The verdict is not valid: none of this is proven.';
  out.push(note);
  let doc;
  try {
    doc = parseJSON(data);
  } catch {
    return [];
  }
  if (!isObject(doc)) return [];
  const signature = isObject(doc.signature) ? doc.signature.key_id : undefined;
  if (typeof signature === 'string') out.push(field('Signed by', signature));
  if (isObject(doc.log)) {
    if (doc.log.index instanceof JNum) out.push(field('Log leaf', doc.log.index.text));
    if (typeof doc.log.checkpoint === 'string') out.push(field('Checkpoint', doc.log.checkpoint));
  }
  if (typeof doc.payload === 'string') {
    let payload;
    try {
      payload = parseJSON(Uint8Array.from(atob(doc.payload), (c) => c.charCodeAt(0)));
    } catch {
      out.push(field('Payload', 'not readable'));
      return out;
    }
    if (isObject(payload) && Array.isArray(payload.layers)) out.push(layersTable(payload.layers));
    out.push(field('Payload', pretty(payload, '')));
  }
  return out;
}

// field is a labelled block of text.
function field(label, text) {
  const div = document.createElement('div');
  div.className = 'field';
  const h = document.createElement('h3');
  h.textContent = label;
  const pre = document.createElement('pre');
  pre.textContent = text;
  div.append(h, pre);
  return div;
}

// layersTable tabulates the layers of a payload: one row a layer, one
// column each member whose value is a string, a number or a boolean.
function layersTable(layers) {
  const table = document.createElement('table');
  table.id = 'layers';
  const columns = [];
  for (const l of layers) {
    if (!isObject(l)) continue;
    for (const [k, v] of Object.entries(l)) if (!columns.includes(k) && !isObject(v) && !Array.isArray(v)) columns.push(k);
  }
  const head = table.createTHead().insertRow();
  for (const c of columns) head.appendChild(document.createElement('th')).textContent = c;
  const body = table.createTBody();
  for (const l of layers) {
    if (!isObject(l)) continue;
    const row = body.insertRow();
    for (const c of columns) row.insertCell().textContent = Object.hasOwn(l, c) ? scalar(l[c]) : '';
  }
  return table;
}

const scalar = (v) => (v instanceof JNum ? v.text : typeof v === 'string' ? v : JSON.stringify(v));

// pretty spells a value parseJSON returned as indented JSON, numbers as
// they were written.
function pretty(v, indent) {
  const inner = indent + '  ';
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return '[\n' + v.map((x) => inner + pretty(x, inner)).join(',\n') + '\n' + indent + ']';
  }
  if (isObject(v)) {
    const members = Object.entries(v);
    if (members.length === 0) return '{}';
    return '{\n' + members.map(([k, x]) => inner + JSON.stringify(k) + ': ' + pretty(x, inner)).join(',\n') + '\n' + indent + '}';
  }
  return v instanceof JNum ? v.text : JSON.stringify(v);
}

// ---- picking and dropping files ----

// role says whether a file is a trusted keys file (an object with
// log_origin and keys), a signed report (an object with lethe_report:
// an addendum when a certificate is beside it), or a document to verify
// (anything else).
async function role(file) {
  try {
    const v = JSON.parse(new TextDecoder().decode(await readFile(file, MAX_SIZE + 1)));
    if (v && typeof v === 'object' && 'log_origin' in v && 'keys' in v) return 'keys';
    if (v && typeof v === 'object' && 'lethe_report' in v) return 'report';
  } catch {
    // not JSON: a document, which verify will call malformed
  }
  return 'document';
}

// Whether the document chosen is a certificate (not a report), so that
// reports dropped later are its addenda.
let certificateChosen = false;

// choose makes file the one of its role. A file input shows the file
// picked with it; a dropped file is named beside the input, which is
// emptied, so that only the file in use is shown.
function choose(which, file, dropped) {
  chosen[which] = file;
  if (dropped) $(which).value = '';
  $(`${which}-name`).textContent = dropped ? `${file.name} (dropped)` : '';
}

// chooseAddenda makes files the addenda, as choose does for one file.
function chooseAddenda(files, dropped) {
  chosen.addenda = files;
  if (dropped) $('addenda').value = '';
  $('addenda-name').textContent = dropped && files.length > 0 ? `${files.map((f) => f.name).join(', ')} (dropped)` : '';
}

$('keys').addEventListener('change', (e) => {
  choose('keys', e.target.files[0] ?? null, false);
  run();
});
$('document').addEventListener('change', async (e) => {
  const file = e.target.files[0] ?? null;
  choose('document', file, false);
  certificateChosen = file !== null && (await role(file)) === 'document';
  run();
});
$('addenda').addEventListener('change', (e) => {
  chooseAddenda([...e.target.files], false);
  run();
});
$('now').addEventListener('change', run);
$('require-log').addEventListener('change', run);
$('verify').addEventListener('click', run);

// A file dropped beside the zone would make the browser open it instead.
document.addEventListener('dragover', (e) => e.preventDefault());
document.addEventListener('drop', (e) => e.preventDefault());
const drop = $('drop');
drop.addEventListener('dragover', (e) => {
  e.preventDefault();
  drop.classList.add('over');
});
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', async (e) => {
  e.preventDefault();
  drop.classList.remove('over');
  const files = [...e.dataTransfer.files];
  const roles = [];
  for (const file of files) roles.push(await role(file));
  // Reports dropped beside a certificate (now or before) are its addenda;
  // a report dropped alone is the document.
  const beside = certificateChosen || roles.includes('document');
  const addenda = [];
  files.forEach((file, i) => {
    if (roles[i] === 'keys') {
      choose('keys', file, true);
    } else if (roles[i] === 'report' && beside) {
      addenda.push(file);
    } else {
      choose('document', file, true);
      certificateChosen = roles[i] === 'document';
    }
  });
  if (addenda.length > 0) chooseAddenda(addenda, true);
  run();
});

run();
