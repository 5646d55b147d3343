// Firestore through the database rules (issue 35, item 1): a document written through the reference the module made
// (`db.collection("matches").doc(id)`, the modular `doc(db, "users", id)`), directly or through a transaction given
// it. A check of a document read in `runTransaction` and the write after it are one step; outside one they are two.
// Lookalikes that stay quiet: a plain edit of a document, a write through a reference the module did not make (its
// collection is unknown), and a `Map`'s `get`/`set`.
import atomicClaim from "../../rules/atomic-claim.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

/** A ranking recalculation guarded by a flag on the match, taken in a transaction (line 9) and cleared after. */
const TRANSACTION_FLAG = `import { getFirestore } from "firebase-admin/firestore";
const db = getFirestore();
export async function onParticipation(matchId: string) {
  const matchRef = db.collection("matches").doc(matchId);
  let mine = false;
  await db.runTransaction(async (tx) => {
    const match = (await tx.get(matchRef)).data();
    if (!match || match.locked) return;
    tx.update(matchRef, { locked: true });
    mine = true;
  });
  if (!mine) return;
  try {
    await recalculateRanking(matchId);
  } finally {
    await matchRef.update({ locked: false });
  }
}
`;

/** A user's import: the status read with `getDoc`, then set with `updateDoc` (line 6), outside any transaction. */
const MODULAR_CHECK_THEN_SET = `import { doc, getDoc, updateDoc, serverTimestamp } from "firebase/firestore";
export async function startImport(db: Firestore, userId: string) {
  const ref = doc(db, "users", userId);
  const user = (await getDoc(ref)).data();
  if (user?.importStatus === "importing") return false;
  await updateDoc(ref, { importStatus: "importing", importStartedAt: serverTimestamp() });
  await importEverything(userId);
  await updateDoc(ref, { importStatus: "done" });
  return true;
}
`;

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    {
      name: "a document edited by id, nothing held",
      code: `import { getFirestore, FieldValue } from "firebase-admin/firestore";
const db = getFirestore();
export async function rename(matchId: string, name: string) {
  await db.collection("matches").doc(matchId).update({ name, updatedAt: FieldValue.serverTimestamp() });
}`,
    },
    {
      // the collection is not known here: a reference handed in is no document the module can name
      name: "a status set through a reference the module did not make",
      code: `export async function start(snap: DocumentSnapshot) {
  if (snap.data()?.status === "syncing") return;
  await snap.ref.update({ status: "syncing" });
  await pull(snap.id);
  await snap.ref.update({ status: "idle" });
}`,
    },
    {
      name: "a Map's get and set are no documents",
      code: `const seen = new Map<string, string>();
export async function remember(id: string, status: string) {
  if (seen.get(id) === "syncing") return;
  seen.set(id, "syncing");
}`,
    },
  ],
  invalid: [
    {
      name: "a flag taken in a transaction that nothing frees when the function dies",
      code: TRANSACTION_FLAG,
      errors: [{ messageId: "missingRecovery", line: 9, data: { model: "matches", field: "locked", value: "true" } }],
    },
    {
      name: "the modular API: a status claimed by updateDoc with no way back",
      code: MODULAR_CHECK_THEN_SET,
      errors: [
        { messageId: "missingRecovery", line: 6, data: { model: "users", field: "importStatus", value: "importing" } },
      ],
    },
  ],
});

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [{ name: "read and written in runTransaction: one step", code: TRANSACTION_FLAG }],
  invalid: [
    {
      name: "getDoc, a check in JavaScript, then updateDoc: two callers both start",
      code: MODULAR_CHECK_THEN_SET,
      errors: [
        {
          messageId: "checkThenAct",
          line: 6,
          data: {
            model: "users",
            field: "importStatus",
            value: "importing",
            claimLine: "6",
            checkedWhere: "in JavaScript",
            checkLine: "5",
          },
        },
      ],
    },
  ],
});
