/** The audit stream of refusals (`audit` option). */
export interface RejectionAuditOptions {
  /** Stream key. @default '<keyPrefix>:audit' */
  streamKey?: string;
  /** Entries kept, approximately (`XADD ... MAXLEN ~ n`): trimming whole nodes is what keeps XADD cheap. @default 10000 */
  maxLen?: number;
}
