/**
 * Row ids as the API takes them: every id column is 32-bit (Zulip's AutoField), so a larger or
 * negative-beyond-range id names no row, and raw SQL must never compare it (PostgreSQL would
 * reject the parameter as out of range for `integer`).
 */

/** The largest id a 32-bit id column holds (message ids included). */
export const MAX_ID = 2 ** 31 - 1;

/** Whether an id fits the 32-bit id columns; one that does not names nothing. */
export const isStorableId = (id: number) =>
  Number.isInteger(id) && id >= -(2 ** 31) && id <= MAX_ID;
