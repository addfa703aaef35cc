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
//   node verify.mjs KEYS.json CERT.json [--now RFC3339] [--require-log]   (CERT.json "-": stdin)
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

import { createReadStream } from 'node:fs';
import { MAX_SIZE, loadKeys, parseTime, verify } from './document.mjs';

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
  const usage = 'usage: node verify.mjs KEYS.json CERT.json [--now RFC3339] [--require-log]   (CERT.json "-" reads stdin)\n';
  const args = [];
  let now = BigInt(Date.now()) * 1000000n;
  let requireLog = false;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--require-log') {
      requireLog = true;
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
  const r = await verify(data, trust, now, requireLog);
  // The physical line goes beside the verdict, never in it: valid is the
  // logical erasure.
  const physical = r.physical === undefined ? '' : `physical: ${r.physical}\n`;
  const horizon = r.horizon === undefined ? '' : `horizon: ${r.horizon}\n`;
  process.stdout.write(`verdict: ${r.verdict}\n${physical}${horizon}reason: ${r.reason}\n`);
  return r.verdict === 'valid' ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
