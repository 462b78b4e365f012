/** The ioredis option types the module takes to create a client of its own (from ioredis, the library it creates). */
export type { ClusterNode, ClusterOptions, RedisOptions } from 'ioredis';
