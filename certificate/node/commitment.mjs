// commitment.mjs lets a data subject recognise their certificate
// (docs/certificate.md, "Subject commitment"): the commitment is
// hex(SHA-256("lethe-subject-commitment-v1" 0x00 secret subject)), over
// the exact UTF-8 bytes of the subject, never normalised. Like the
// verifier's modules it uses only WebCrypto, so a browser can run it too.
//
//   node commitment.mjs SECRET_HEX SUBJECT     prints the commitment

import { fromHex, hex, sha256, utf8 } from './bytes.mjs';

// subjectCommitment resolves to the commitment to subject (a string,
// hashed as its UTF-8 bytes) under the 32-byte secret given in hex.
export async function subjectCommitment(secretHex, subject) {
  const secret = fromHex(secretHex);
  if (secret === null || secret.length !== 32) throw new Error('the secret is 64 hex digits');
  return hex(await sha256(utf8('lethe-subject-commitment-v1\x00'), secret, utf8(subject)));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [secretHex, subject] = process.argv.slice(2);
  if (subject === undefined) {
    process.stderr.write('usage: node commitment.mjs SECRET_HEX SUBJECT\n');
    process.exitCode = 2;
  } else {
    process.stdout.write((await subjectCommitment(secretHex, subject)) + '\n');
  }
}
