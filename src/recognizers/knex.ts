/** knex: not implemented yet (a recognizer that recognises nothing). */
import type { Recognizer } from "./recognizer.js";

export const knexRecognizer: Recognizer = {
  store: "knex",
  methods: new Set<string>(),
  recognize: () => undefined,
};
