declare module 'cluster-key-slot' {
  /** The Redis Cluster hash slot of a key (CRC16 of its hash tag, mod 16384). */
  export default function calculateSlot(key: string | Buffer): number;
}
