/** Where configuration comes from: `process.env` (with `sample-app/.env` loaded into it), or what a test passes. */
export type EnvSource = Record<string, string | undefined>;

/** The variable, or `fallback` when it is unset or empty: an empty line in `.env` means "use the default". */
export function env(source: EnvSource, name: string, fallback: string): string {
  return optionalEnv(source, name) ?? fallback;
}

export function optionalEnv(source: EnvSource, name: string): string | undefined {
  const value = source[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** `true`/`1`/`yes` or `false`/`0`/`no`; anything else stops the app at start-up rather than being guessed. */
export function booleanEnv(source: EnvSource, name: string, fallback: boolean): boolean {
  const value = optionalEnv(source, name)?.toLowerCase();
  if (value === undefined) return fallback;
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no'].includes(value)) return false;
  throw new Error(`Invalid ${name}: ${JSON.stringify(source[name])} (expected true or false)`);
}

export function portEnv(source: EnvSource, name: string, fallback: number): number {
  const text = optionalEnv(source, name);
  if (text === undefined) return fallback;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) throw new Error(`Invalid ${name}: ${JSON.stringify(text)} (expected a port number, 0-65535)`);
  return port;
}

/** A positive whole number of milliseconds, or undefined when unset; anything else stops the app at start-up. */
export function msEnv(source: EnvSource, name: string): number | undefined {
  const text = optionalEnv(source, name);
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) <= 0) throw new Error(`Invalid ${name}: ${JSON.stringify(text)} (expected a positive whole number of ms)`);
  return Number(text);
}
