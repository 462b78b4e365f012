/** Sends text messages; the sample binds a stub (`StubSmsProvider`), an application binds its gateway. */
export abstract class SmsProvider {
  /** Resolves once the provider has accepted the message; rejects with `SmsDeliveryError` otherwise. */
  abstract send(to: string, text: string, options?: { simulateFailure?: boolean }): Promise<void>;
}

export class SmsDeliveryError extends Error {
  override readonly name = 'SmsDeliveryError';
}
