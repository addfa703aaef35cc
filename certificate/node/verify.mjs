#!/usr/bin/env node
// verify.mjs verifies a Lethe deletion certificate (payload v1, v2 or v3) or a signed
// report, lethe.report/v1 (docs/certificate.md), independently of the Go
// code: it reads the same bytes and runs the same checks in the same order,
// so an auditor can read it in one sitting. This file is the command line
// (reading files is the only thing it does that a browser could not); the
// checks are modules every host runs, Node here and a browser in
// certificate/webverify: document.mjs is their entry point, certificate.mjs
// and report.mjs the checks of each document, envelope.mjs what they share
// (keys, envelope, signature, log), jsonsubset.mjs the JSON and time
// subsets, bytes.mjs byte handling and WebCrypto's SHA-256. Ed25519 is
// WebCrypto's too (Node 20 or later).
//
//   node verify.mjs KEYS.json CERT.json [--now RFC3339] [--require-log] [--addendum FILE]...   (CERT.json "-": stdin)
//
// A document with a member "lethe_report" is a report; anything else is
// verified as a certificate. It prints "verdict: <verdict>" and a reason,
// and between them, for a valid v2 or v3 certificate, "physical: <state of
// each layer's pages>", then for a valid v3 certificate "horizon: <when
// each kind of copy is expected to be gone>".
// The exit status is 0 only for "valid", 1 for any other verdict, and 2
// when it cannot run (usage, an unreadable or invalid keys file). --now is
// the instant of verification: a certificate is current at it, a report is
// not dated after it. --require-log makes a report without a log section
// not_in_log (a certificate always needs one).
// --addendum FILE (repeatable) gives a certificate's addenda, signed
// forget.physical and forget.replayed reports of its request
// (docs/certificate.md, "Addenda"): beside a valid verdict the physical
// line then folds in each layer's newest re-scan, a "replay:" line says
// when the forget was last re-applied after a restore, and an "addendum
// FILE: <verdict>: <reason>" line says what became of each. The verdict
// stays the certificate's; the exit status is 0 only when it is valid and
// every addendum was folded.

import { createReadStream } from 'node:fs';
import { MAX_SIZE, isReport, loadKeys, parseTime, verify, verifyWithAddenda } from './document.mjs';

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
  const usage = 'usage: node verify.mjs KEYS.json CERT.json [--now RFC3339] [--require-log] [--addendum FILE]...   (CERT.json "-" reads stdin)\n';
  const args = [];
  const addendumFiles = [];
  let now = BigInt(Date.now()) * 1000000n;
  let requireLog = false;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--require-log') {
      requireLog = true;
    } else if (argv[i] === '--addendum') {
      if (i + 1 >= argv.length) {
        process.stderr.write(`verify.mjs: --addendum wants a file: a forget.physical or forget.replayed report of the certificate\n${usage}`);
        return 2;
      }
      addendumFiles.push(argv[++i]);
    } else if (argv[i] === '--now') {
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
    trust = await loadKeys(await readBounded(args[0], MAX_SIZE + 1));
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
  if (addendumFiles.length > 0) return verifyFolded(data, addendumFiles, trust, now, usage);
  const r = await verify(data, trust, now, requireLog);
  // The physical line goes beside the verdict, never in it: valid is the
  // logical erasure.
  const physical = r.physical === undefined ? '' : `physical: ${r.physical}\n`;
  const horizon = r.horizon === undefined ? '' : `horizon: ${r.horizon}\n`;
  process.stdout.write(`verdict: ${r.verdict}\n${physical}${horizon}reason: ${r.reason}\n`);
  return r.verdict === 'valid' ? 0 : 1;
}

// verifyFolded verifies the certificate data with the addenda in files
// and prints what lethe-proxy verify --addendum prints.
async function verifyFolded(data, files, trust, now, usage) {
  if (isReport(data)) {
    process.stderr.write(`verify.mjs: --addendum goes with a certificate; this is a signed report\n${usage}`);
    return 2;
  }
  const addenda = [];
  for (const name of files) {
    try {
      addenda.push({ name, data: await readBounded(name, MAX_SIZE + 1) });
    } catch (e) {
      process.stderr.write(`verify.mjs: reading the addendum ${name}: ${e.message}\n`);
      return 2;
    }
  }
  const r = await verifyWithAddenda(data, addenda, trust, now);
  let out = `verdict: ${r.verdict}\n`;
  if (r.physical !== undefined) out += `physical: ${r.physical}\n`;
  if (r.horizon !== undefined) out += `horizon: ${r.horizon}\n`;
  if (r.replay !== undefined) out += `replay: ${r.replay}\n`;
  for (const a of r.addenda) out += `addendum ${a.name}: ${a.verdict}: ${a.reason}\n`;
  if (r.verdict !== 'valid') out += 'addenda: none folded: the certificate is not valid\n';
  process.stdout.write(`${out}reason: ${r.reason}\n`);
  return r.verdict === 'valid' && r.addenda.every((a) => a.verdict === 'valid') ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
