/** A refusal of an organization export by the import: one line naming the file and the record. */
export class ImportError extends Error {}
