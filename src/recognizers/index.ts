/** Every recognizer the inventory runs. Adding a store means adding its file here; no rule changes. */
import type { Recognizer } from "./recognizer.js";
import { drizzleRecognizer } from "./drizzle/drizzle.js";
import { dynamodbRecognizer } from "./dynamodb/dynamodb.js";
import { firestoreRecognizer } from "./firestore.js";
import { lockTableRecognizer } from "./lock-table.js";
import { lockFilesRecognizer } from "./lock-files.js";
import { mikroOrmRecognizer } from "./mikro-orm.js";
import { knexRecognizer } from "./knex/knex.js";
import { kyselyRecognizer } from "./kysely.js";
import { mongoRecognizer } from "./mongo/mongo.js";
import { mutexRecognizer } from "./mutex.js";
import { azureBlobRecognizer, fsRecognizer, gcsRecognizer, s3Recognizer } from "./object-storage.js";
import { payloadRecognizer } from "./payload.js";
import { postgrestRecognizer } from "./postgrest.js";
import { prismaRecognizer } from "./prisma.js";
import { redisLocksRecognizer } from "./redis-locks.js";
import { redisRecognizer } from "./redis/redis.js";
import { sequelizeRecognizer } from "./sequelize.js";
import { sqlRecognizer } from "./sql/sql.js";
import { strapiRecognizer } from "./strapi.js";
import { typeormRecognizer } from "./typeorm/typeorm.js";

/**
 * Order matters only where two recognizers accept the same call: the first that returns an access wins.
 * Raw SQL comes first (a `query("UPDATE …")` is SQL whatever the receiver); Payload's `payload.update({ collection,
 * where, data })` and Strapi's `strapi.db.query(uid).update({ where, data })` before Prisma, whose calls look alike; Prisma before the two-argument
 * `update(criteria, values)` clients. In-process mutexes before the Redis lock libraries, which share their
 * class and method names (`new Mutex()` against redis-semaphore's `new Mutex(redis, key)`). A `Map` the module keeps (an in-process lock
 * table) before Redis, whose `get`/`set` it shares.
 * PostgREST before Knex, whose `from(table)` chains it shares a root with: it takes only the chains something
 * PostgREST-only marks (an `eq` link, a `{ data, error }` result, a supabase-js import), and leaves Knex the rest.
 * Object storage before the ORMs: GCS `file.save(data)` is no document save. Firestore before the ORMs: it takes a
 * call only when the module made the document reference it is given (`db.collection("jobs").doc(id)`), and a
 * transaction's `tx.update(ref, data)` would otherwise look like a two-argument `update(criteria, values)`. TypeORM before MikroORM, whose
 * EntityManager shares `find(Entity, …)` and `insert(Entity, …)`: TypeORM's options (`{ where }`) are its own.
 * DynamoDB before the ORMs too: it takes only requests whose parameters name a table (`TableName`), which no ORM's
 * `update(…)`/`put(…)` options do.
 */
export const recognizers: readonly Recognizer[] = [
  sqlRecognizer,
  s3Recognizer,
  gcsRecognizer,
  azureBlobRecognizer,
  fsRecognizer,
  lockFilesRecognizer,
  firestoreRecognizer,
  dynamodbRecognizer,
  payloadRecognizer,
  strapiRecognizer,
  prismaRecognizer,
  typeormRecognizer,
  mikroOrmRecognizer,
  sequelizeRecognizer,
  mongoRecognizer,
  postgrestRecognizer,
  knexRecognizer,
  kyselyRecognizer,
  drizzleRecognizer,
  lockTableRecognizer,
  redisRecognizer,
  mutexRecognizer,
  redisLocksRecognizer,
];
