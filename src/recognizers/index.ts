/** Every recognizer the inventory runs. Adding a store means adding its file here; no rule changes. */
import type { Recognizer } from "./recognizer.js";
import { prismaRecognizer } from "./prisma.js";
import { redisLocksRecognizer } from "./redis-locks.js";
import { redisRecognizer } from "./redis.js";

export const recognizers: readonly Recognizer[] = [prismaRecognizer, redisRecognizer, redisLocksRecognizer];
