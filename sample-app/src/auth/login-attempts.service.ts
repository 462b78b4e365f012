import { Injectable } from '@nestjs/common';
import { LOGIN_IP_RULE, LOGIN_USER_RULE } from '../config/rule-names.js';
import { RateLimitExceededException, RateLimitService } from 'nestjs-redis-rate-limit';

/**
 * Failed logins, per client IP (one attacker trying many accounts) and per account (many IPs trying one
 * account). Only failures count, so a user who types the password right is never held back by their own logins.
 */
@Injectable()
export class LoginAttemptsService {
  constructor(private readonly limits: RateLimitService) {}

  /**
   * Refuses (429) an IP or an account that has used up its failed attempts, before the password is even
   * checked: a locked account stays locked for the right password too, or guessing would go on regardless.
   * Records nothing.
   */
  async assertAllowed(ip: string, username: string): Promise<void> {
    const decisions = await Promise.all([this.limits.peek(ipKey(ip), LOGIN_IP_RULE), this.limits.peek(userKey(username), LOGIN_USER_RULE)]);
    const refused = decisions.filter((d) => !d.allowed);
    if (refused.length > 0) {
      const retryAfterMs = Math.max(...refused.map((d) => d.retryAfterMs));
      throw new RateLimitExceededException('Too many failed login attempts, try again later', retryAfterMs, decisions);
    }
  }

  /** Counts a failure against both, in one round trip. */
  async recordFailure(ip: string, username: string): Promise<void> {
    await this.limits.consumeAll([
      { key: ipKey(ip), rule: LOGIN_IP_RULE },
      { key: userKey(username), rule: LOGIN_USER_RULE },
    ]);
  }

  /** The account's earlier failures were the user's own typos: forget them. The IP's stay. */
  async recordSuccess(username: string): Promise<void> {
    await this.limits.reset(userKey(username), LOGIN_USER_RULE);
  }
}

// Service keys are used as given, so each names what it counts.
const ipKey = (ip: string) => `ip:${ip}`;
const userKey = (username: string) => `user:${username}`;
