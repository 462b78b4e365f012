import type { LoggerService } from '@nestjs/common';
import { ConfigModule, registerAs } from '@nestjs/config';

export const ENV_LIMIT = 'RATE_LIMIT_LOGIN_LIMIT';
export const ENV_WINDOW = 'RATE_LIMIT_LOGIN_WINDOW';
export const ENV_ALGORITHM = 'RATE_LIMIT_LOGIN_ALGORITHM';

/**
 * The `rateLimit` config namespace as an application writes it, from env vars (which arrive as strings); read
 * when the testing module is compiled.
 */
export function rateLimitConfig() {
  return ConfigModule.forRoot({
    ignoreEnvFile: true,
    load: [
      registerAs('rateLimit', () => ({
        rules: {
          login: {
            limit: process.env[ENV_LIMIT] ?? '3',
            window: process.env[ENV_WINDOW] ?? '1m',
            algorithm: process.env[ENV_ALGORITHM] ?? 'sliding-log',
          },
        },
      })),
    ],
  });
}

/** Sets env vars for one test; `restore()` puts back what was there. */
export function withEnv(vars: Record<string, string>): { restore(): void } {
  const before = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  Object.assign(process.env, vars);
  return {
    restore() {
      for (const [name, value] of Object.entries(before)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    },
  };
}

/** A logger that keeps what it is given, for `app.useLogger()`. */
export class CapturingLogger implements LoggerService {
  readonly errors: string[] = [];
  readonly logs: string[] = [];
  log(message: unknown) {
    this.logs.push(String(message));
  }
  error(message: unknown) {
    this.errors.push(String(message));
  }
  warn() {}
  debug() {}
  verbose() {}
}

/** Polls `condition` until it holds or `timeoutMs` passes (long: a passing wait ends when it holds; then fails, saying what was awaited). */
export async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
