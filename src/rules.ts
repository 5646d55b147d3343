/** Every rule, by id. The meta test checks each file under rules/ is listed here under its file name. */
import atomicClaim from "../rules/atomic-claim.js";
import conditionalRecovery from "../rules/conditional-recovery.js";
import heartbeatAbort from "../rules/heartbeat-abort.js";
import ownerCheckedRelease from "../rules/owner-checked-release.js";
import progressBasedStaleness from "../rules/progress-based-staleness.js";
import releaseInFinally from "../rules/release-in-finally.js";
import requireFencing from "../rules/require-fencing.js";
import requireLockTtl from "../rules/require-lock-ttl.js";
import requireStaleRecovery from "../rules/require-stale-recovery.js";

export const rules = {
  "atomic-claim": atomicClaim,
  "conditional-recovery": conditionalRecovery,
  "heartbeat-abort": heartbeatAbort,
  "owner-checked-release": ownerCheckedRelease,
  "progress-based-staleness": progressBasedStaleness,
  "release-in-finally": releaseInFinally,
  "require-fencing": requireFencing,
  "require-lock-ttl": requireLockTtl,
  "require-stale-recovery": requireStaleRecovery,
};
