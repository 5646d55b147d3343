// Types for scripts/services.js (plain JS so that it runs with `node` alone).
export interface Service {
  url: string;
  version: string;
  stop(): void;
}
export function freePort(): Promise<number>;
export function startPostgres(): Promise<Service & { dir: string }>;
export function startRedis(): Promise<Service>;
export function reapOrphans(): void;
