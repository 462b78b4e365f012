import { Injectable } from '@nestjs/common';
import { LOGIN_IP_RULE, LOGIN_USER_RULE } from '../config/rule-names.js';
import { RateLimitExceededException, RateLimitService } from 'nestjs-redis-rate-limit';

/**
 * Login attempts, per client IP (one attacker trying many accounts) and per account (many IPs trying one account).
 * Every attempt is counted before the password is checked, so that a refusal starts a lockout, and a lockout that
 * escalates (see the rules' `lockout` in config/rate-limit.config.ts) grows with each round of guessing. A
 * successful login takes its attempt back: a user who types the password right is never held back by their own logins.
 */
@Injectable()
export class LoginAttemptsService {
  constructor(private readonly limits: RateLimitService) {}

  /**
   * Counts the attempt against both, all-or-nothing, in one round trip; refuses (429) an IP or an account that has
   * used up its attempts, before the password is even checked: a locked account stays locked for the right password
   * too, or guessing would go on regardless. That refusal starts the refusing rule's lockout, one level longer when
   * the previous lockout ended less than a day ago.
   */
  async attempt(ip: string, username: string): Promise<void> {
    const result = await this.limits.consumeAll([
      { key: ipKey(ip), rule: LOGIN_IP_RULE },
      { key: userKey(username), rule: LOGIN_USER_RULE },
    ]);
    if (!result.allowed) {
      const retryAfterMs = Math.max(...result.decisions.filter((d) => !d.allowed).map((d) => d.retryAfterMs));
      throw new RateLimitExceededException('Too many failed login attempts, try again later', retryAfterMs, result.decisions);
    }
  }

  /**
   * The account's earlier failures were the user's own typos: forget them, and its lockout level with them. The IP
   * gets this attempt back, but keeps its failures (and its level): one right password does not clear an IP that
   * tries many accounts.
   */
  async recordSuccess(ip: string, username: string): Promise<void> {
    await Promise.all([this.limits.reset(userKey(username), LOGIN_USER_RULE), this.limits.refund(ipKey(ip), LOGIN_IP_RULE)]);
  }
}

// Service keys are used as given, so each names what it counts.
const ipKey = (ip: string) => `ip:${ip}`;
const userKey = (username: string) => `user:${username}`;
