// MikroORM through the database rules (the store the architecture walk-through adds, docs/architecture.md): the
// EntityManager's `nativeUpdate(Entity, where, data)` as a claim and as a recovery, `find(Entity, where)` as the check
// of check-then-act, a repository's `nativeUpdate(where, data)`, FilterQuery's `$`-operators, and the lookalikes that
// must stay quiet: TypeORM's EntityManager (same method names, `{ where }` options), and a `find` on anything not
// named like an EntityManager or a repository.
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

const lock = (model: string, field: string, value: string) => ({ model, field, value });

/** A transcoding worker: one conditional claim per uploaded video (line 6), and the heartbeat it keeps while it works. */
const CLAIM = `import { EntityManager } from "@mikro-orm/postgresql";
import { Video } from "./video.entity";
export class Transcoder {
  constructor(private readonly em: EntityManager) {}
  async claim(id: string): Promise<boolean> {
    const changed = await this.em.nativeUpdate(Video, { id, state: "UPLOADED" }, { state: "TRANSCODING", beatAt: new Date() });
    return changed === 1;
  }
  async beat(id: string) {
    await this.em.nativeUpdate(Video, { id, state: "TRANSCODING" }, { beatAt: new Date() });
  }
}
`;

/** The same worker picking a video with a read, then claiming it by id: the claim is line 5, the read line 4. */
const READ_THEN_CLAIM = `import { Video } from "./video.entity";
export class Transcoder {
  async next() {
    const video = await this.em.findOne(Video, { state: "UPLOADED" });
    await this.em.nativeUpdate(Video, { id: video.id }, { state: "TRANSCODING", beatAt: new Date() });
    return video;
  }
}
`;

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    {
      name: "the claim and a sweep judged by the heartbeat, through a repository",
      code:
        CLAIM +
        `export async function sweep(videoRepository: EntityRepository<Video>) {
  await videoRepository.nativeUpdate({ state: "TRANSCODING", beatAt: { $lt: new Date(Date.now() - 600_000) } }, { state: "UPLOADED" });
}`,
    },
    {
      // TypeORM's EntityManager has find(Entity, options) and update(Entity, criteria, partial): its own reading
      name: "TypeORM's EntityManager is TypeORM's, and a plain transition is no claim",
      code: `import { EntityManager } from "typeorm";
export async function publish(entityManager: EntityManager, id: string) {
  const post = await entityManager.find(Post, { where: { id, state: "DRAFT" } });
  await entityManager.update(Post, { id }, { state: "PUBLISHED" });
  return post;
}`,
    },
    {
      name: "find on a client not named like an EntityManager or a repository is not read",
      code: `export async function run(search: SearchIndex) {
  const hits = await search.find(Video, { state: "UPLOADED" });
  await search.nativeUpdate(Video, { id: hits[0].id }, { state: "TRANSCODING" });
}`,
    },
  ],
  invalid: [
    {
      name: "a conditional claim with nothing to move a dead worker's video back; the recovery is a method on this.em",
      code: CLAIM,
      errors: [
        {
          messageId: "missingRecovery",
          line: 6,
          column: 27,
          data: lock("Video", "state", "TRANSCODING"),
          suggestions: [
            {
              messageId: "addRecovery",
              data: {
                name: "recoverStaleVideo",
                value: "TRANSCODING",
                back: '"UPLOADED"',
                timeField: "beatAt",
                threshold: "STALE_VIDEO_TRANSCODING_MS",
              },
              output: `import { EntityManager } from "@mikro-orm/postgresql";
import { Video } from "./video.entity";
/** How long a Video row may stay TRANSCODING without beatAt moving before its holder counts as dead. */
const STALE_VIDEO_TRANSCODING_MS = 15 * 60 * 1000;

export class Transcoder {
  constructor(private readonly em: EntityManager) {}
  async claim(id: string): Promise<boolean> {
    const changed = await this.em.nativeUpdate(Video, { id, state: "UPLOADED" }, { state: "TRANSCODING", beatAt: new Date() });
    return changed === 1;
  }

  /**
   * Gives Video rows left TRANSCODING by a holder that died (SIGKILL, OOM, a deploy) back to UPLOADED, once
   * beatAt has not moved for STALE_VIDEO_TRANSCODING_MS. Run it from a scheduled sweeper, or before claiming.
   */
  async recoverStaleVideo(): Promise<number> {
    const result = await this.em.nativeUpdate(Video, { state: "TRANSCODING", beatAt: { $lt: new Date(Date.now() - STALE_VIDEO_TRANSCODING_MS) } }, { state: "UPLOADED" });
    return result;
  }
  async beat(id: string) {
    await this.em.nativeUpdate(Video, { id, state: "TRANSCODING" }, { beatAt: new Date() });
  }
}
`,
            },
          ],
        },
      ],
    },
  ],
});

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    { name: "one conditional nativeUpdate (the state it takes from in the filter)", code: CLAIM },
    {
      name: "one conditional nativeUpdate with $ne",
      code: CLAIM.replace('state: "UPLOADED" }', 'state: { $ne: "TRANSCODING" } }'),
    },
  ],
  invalid: [
    {
      name: "findOne of an uploaded video, then nativeUpdate by id",
      code: READ_THEN_CLAIM,
      errors: [
        {
          messageId: "checkThenAct",
          line: 5,
          column: 11,
          data: {
            model: "Video",
            field: "state",
            value: "TRANSCODING",
            claimLine: "5",
            checkedWhere: "with a separate read",
            checkLine: "4",
          },
          suggestions: [
            {
              messageId: "addCondition",
              data: {
                model: "Video",
                field: "state",
                value: "TRANSCODING",
                claimLine: "5",
                checkedWhere: "with a separate read",
                checkLine: "4",
              },
              output: READ_THEN_CLAIM.replace("{ id: video.id }", '{ id: video.id, state: { $ne: "TRANSCODING" } }'),
            },
          ],
        },
      ],
    },
  ],
});

ruleTester.run("conditional-recovery", conditionalRecovery, {
  valid: [
    {
      name: "the sweep repeats the claimed state and the age in its one write",
      code:
        CLAIM +
        `export async function sweep(em: EntityManager) {
  await em.nativeUpdate(Video, { state: "TRANSCODING", beatAt: { $lt: new Date(Date.now() - 600_000) } }, { state: "UPLOADED" });
}`,
    },
  ],
  invalid: [
    {
      name: "a sweep that frees every transcoding video, however recent its heartbeat",
      code:
        CLAIM +
        `export async function failStuck(em: EntityManager) {
  await em.nativeUpdate(Video, { state: "TRANSCODING" }, { state: "FAILED" });
}`,
      errors: [
        {
          messageId: "missingTime",
          line: 14,
          column: 9,
          data: {
            ...lock("Video", "state", "TRANSCODING"),
            claimLine: "6",
            target: "FAILED",
            rowFilter: "state",
            checkedWhere: "",
            checkLine: "",
          },
        },
      ],
    },
  ],
});

ruleTester.run("progress-based-staleness", progressBasedStaleness, {
  valid: [],
  invalid: [
    {
      name: "a sweep judged by when the video was uploaded",
      code:
        CLAIM +
        `export async function sweep(em: EntityManager) {
  await em.nativeUpdate(Video, { state: "TRANSCODING", createdAt: { $lt: new Date(Date.now() - 600_000) } }, { state: "UPLOADED" });
}`,
      errors: [
        {
          messageId: "startTimeRecovery",
          line: 14,
          column: 56,
          data: {
            ...lock("Video", "state", "TRANSCODING"),
            claimLine: "6",
            stamped: "set once when work starts",
            timeField: "createdAt",
            progressFields: "updatedAt, modifiedAt, heartbeatAt",
          },
        },
      ],
    },
  ],
});
