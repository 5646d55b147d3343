/** sql: not implemented yet (a recognizer that recognises nothing). */
import type { Recognizer } from "./recognizer.js";

export const sqlRecognizer: Recognizer = {
  store: "sql",
  methods: new Set<string>(),
  recognize: () => undefined,
};
