/** mongo: not implemented yet (a recognizer that recognises nothing). */
import type { Recognizer } from "./recognizer.js";

export const mongoRecognizer: Recognizer = {
  store: "mongo",
  methods: new Set<string>(),
  recognize: () => undefined,
};
