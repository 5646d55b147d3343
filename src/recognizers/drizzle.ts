/** drizzle: not implemented yet (a recognizer that recognises nothing). */
import type { Recognizer } from "./recognizer.js";

export const drizzleRecognizer: Recognizer = {
  store: "drizzle",
  methods: new Set<string>(),
  recognize: () => undefined,
};
