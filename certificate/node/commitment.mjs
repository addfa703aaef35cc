// commitment.mjs lets a data subject recognise their certificate
// (docs/certificate.md, "Subject commitment"): the commitment is
// hex(SHA-256("lethe-subject-commitment-v1" 0x00 secret subject)), over
// the exact UTF-8 bytes of the subject, never normalised.
//
//   node commitment.mjs SECRET_HEX SUBJECT     prints the commitment

import { createHash } from 'node:crypto';

// subjectCommitment is the commitment to subject (a string, hashed as its
// UTF-8 bytes) under the 32-byte secret given in hex.
export function subjectCommitment(secretHex, subject) {
  const secret = Buffer.from(secretHex, 'hex');
  if (secret.length !== 32 || secret.toString('hex') !== secretHex.toLowerCase()) throw new Error('the secret is 64 hex digits');
  return createHash('sha256').update('lethe-subject-commitment-v1\x00').update(secret).update(Buffer.from(subject, 'utf8')).digest('hex');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [secretHex, subject] = process.argv.slice(2);
  if (subject === undefined) {
    process.stderr.write('usage: node commitment.mjs SECRET_HEX SUBJECT\n');
    process.exitCode = 2;
  } else {
    process.stdout.write(subjectCommitment(secretHex, subject) + '\n');
  }
}
