// Starts a throwaway PostgreSQL and Redis for the proof scenarios and stops them when the run ends. A server that
// cannot start skips the scenarios that need it, with a loud message; with LOCKS_PROOF_REQUIRED=1 (set by
// .ci/run) it fails the run instead.
import type { TestProject } from "vitest/node";
import { startPostgres, startRedis, type Service } from "../../scripts/services.js";

export default async function setup(project: TestProject): Promise<() => void> {
  const [postgres, redis] = await Promise.allSettled([startPostgres(), startRedis()]);
  const started = [postgres, redis].flatMap((s) => (s.status === "fulfilled" ? [s.value as Service] : []));
  const problems = [
    postgres.status === "rejected" ? `PostgreSQL: ${reason(postgres.reason)}` : "",
    redis.status === "rejected" ? `Redis: ${reason(redis.reason)}` : "",
  ].filter(Boolean);
  if (problems.length > 0 && process.env.LOCKS_PROOF_REQUIRED === "1") {
    for (const service of started) service.stop();
    throw new Error(`the proof scenarios need PostgreSQL and Redis (LOCKS_PROOF_REQUIRED=1): ${problems.join("; ")}`);
  }
  for (const service of started) console.log(`proof scenarios: ${service.version.split(" sha=")[0]} at ${service.url}`);
  project.provide("proofServices", {
    postgres: postgres.status === "fulfilled" ? postgres.value.url : undefined,
    redis: redis.status === "fulfilled" ? redis.value.url : undefined,
    unavailable: problems.length > 0 ? problems.join("; ") : undefined,
  });
  return () => {
    for (const service of started) service.stop();
  };
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
