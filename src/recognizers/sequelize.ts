/** sequelize: not implemented yet (a recognizer that recognises nothing). */
import type { Recognizer } from "./recognizer.js";

export const sequelizeRecognizer: Recognizer = {
  store: "sequelize",
  methods: new Set<string>(),
  recognize: () => undefined,
};
