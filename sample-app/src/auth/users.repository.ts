import { Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Demo accounts, in memory. A real application keeps slow password hashes (argon2, bcrypt); a fast digest is
 * enough to show the rate limiting, which is what stands between these weak passwords and a brute-force attack.
 */
const DEMO_USERS: Record<string, string> = {
  alice: 'wonderland',
  bob: 'builder',
};

@Injectable()
export class UsersRepository {
  private readonly digests = new Map(Object.entries(DEMO_USERS).map(([name, password]) => [name, digest(password)]));
  // Unknown users are checked against this too, so the answer takes as long as for a known one.
  private readonly nobody = digest('');

  /** Whether the password is the user's; `username` is already normalised (lower case, trimmed). */
  verify(username: string, password: string): boolean {
    const expected = this.digests.get(username);
    const matches = timingSafeEqual(digest(password), expected ?? this.nobody);
    return expected !== undefined && matches;
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
