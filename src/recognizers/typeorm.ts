/** typeorm: not implemented yet (a recognizer that recognises nothing). */
import type { Recognizer } from "./recognizer.js";

export const typeormRecognizer: Recognizer = {
  store: "typeorm",
  methods: new Set<string>(),
  recognize: () => undefined,
};
