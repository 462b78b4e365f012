import { createHash } from 'node:crypto';

// With the `u` flag a paired surrogate is one code point, so this matches lone surrogates only.
const LONE_SURROGATE = /\p{Cs}/u;
// 0xFF never occurs in UTF-8, so no well-formed text hashes the same bytes as the UTF-16 form below.
const UTF16_DOMAIN = Buffer.from([0xff]);

/**
 * SHA-256 (base64url) of what was sent. Well-formed text is hashed as UTF-8; a string with a lone surrogate,
 * which UTF-8 cannot carry (it would become U+FFFD, one digest for many strings), by its UTF-16 code units.
 */
export function textDigest(text: string): string {
  const hash = createHash('sha256');
  if (LONE_SURROGATE.test(text)) hash.update(UTF16_DOMAIN).update(Buffer.from(text, 'utf16le'));
  else hash.update(text, 'utf8');
  return hash.digest('base64url');
}
