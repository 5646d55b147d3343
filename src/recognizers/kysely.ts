/** kysely: not implemented yet (a recognizer that recognises nothing). */
import type { Recognizer } from "./recognizer.js";

export const kyselyRecognizer: Recognizer = {
  store: "kysely",
  methods: new Set<string>(),
  recognize: () => undefined,
};
