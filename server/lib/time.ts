/** UNIX time in whole seconds, as the API gives timestamps (Zulip's datetime_to_timestamp). */
export const unixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);
