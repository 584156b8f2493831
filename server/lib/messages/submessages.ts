/**
 * Widgets and their submessages (zerver/lib/widget.py get_widget_data, get_widget_type;
 * zerver/actions/submessage.py verify_submessage_sender; zerver/lib/validator.py
 * validate_poll_data, validate_todo_data). Pure checks: the texts are Zulip's, including the
 * `check_dict` family's ("poll data[\"key\"] is not a string", "Unexpected arguments: …").
 */
import { JsonableError } from "../../errors.ts";
import type { Related } from "./message-dicts.ts";

/** The widget a `/poll` or `/todo` message creates, as its `widget` submessage's content. */
export interface WidgetContent {
  widget_type: "poll" | "todo";
  extra_data:
    | { question: string; options: string[] }
    | { task_list_title: string; tasks: { task: string; desc: string }[] };
}

/** A list item's marker (`- `, `* `) and the blanks around it, as Zulip strips it once. */
const LIST_MARKER = /\s*[-*]?\s*/;

/** Python's str.splitlines boundaries (enough of them for message text). */
function splitLines(text: string): string[] {
  const lines = text.split(/\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/);
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Python's str.strip() (whitespace), for a line of the command. */
const strip = (s: string) => s.replace(/^[\s\x1c-\x1f\x85]+|[\s\x1c-\x1f\x85]+$/g, "");

/**
 * get_widget_data: a message whose first word is `/poll` or `/todo` creates that widget, its
 * first line the question (or title), each following line an option (or a task, `task: desc`).
 */
export function widgetFor(content: string): WidgetContent | null {
  const first = content.split(/\s+/)[0] ?? "";
  if (first !== "/poll" && first !== "/todo") return null;
  const lines = splitLines(content.replace(first, ""));
  let heading = "";
  if (lines.length > 0 && lines[0]) heading = strip(lines.shift()!);
  const items = lines.map((line) => strip(line).replace(LIST_MARKER, "")).filter((s) => s !== "");
  if (first === "/poll")
    return { widget_type: "poll", extra_data: { question: heading, options: items } };
  const tasks = items.map((item) => {
    const at = item.indexOf(": ");
    return at < 0
      ? { task: strip(item), desc: "" }
      : { task: strip(item.slice(0, at)), desc: strip(item.slice(at + 2)) };
  });
  return { widget_type: "todo", extra_data: { task_list_title: heading, tasks } };
}

/**
 * verify_submessage_sender: the first submessage of a message is its sender's; after that,
 * anyone who can read it may add one.
 */
export function checkSubmessageSender(
  message: { senderId: number },
  submessages: Related["submessages"],
  userId: number,
): void {
  if (message.senderId === userId) return;
  if (submessages.some((s) => s.senderId === message.senderId)) return;
  throw new JsonableError("You cannot attach a submessage to this message.");
}

/** get_widget_type: the `widget_type` of the message's first widget submessage, if readable. */
export function widgetTypeOf(submessages: Related["submessages"]): unknown {
  const widget = submessages.find((s) => s.msgType === "widget");
  if (!widget) return null;
  try {
    const data: unknown = JSON.parse(widget.content);
    return data !== null && typeof data === "object" && !Array.isArray(data)
      ? (data as Record<string, unknown>).widget_type
      : null;
  } catch {
    return null;
  }
}

/**
 * Python's json.dumps, as Zulip stores a widget's content: `", "` and `": "` separators,
 * non-ASCII escaped.
 */
export function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(", ")}]`;
  if (value !== null && typeof value === "object")
    return `{${Object.entries(value)
      .map(([k, v]) => `${pythonJson(k)}: ${pythonJson(v)}`)
      .join(", ")}}`;
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** MAX_IDX of Zulip's client widgets. */
const MAX_IDX = 1000;

type Check = (name: string, value: unknown) => void;

// Python's isinstance(x, int) holds for booleans too.
const isInt = (v: unknown) =>
  typeof v === "boolean" || (typeof v === "number" && Number.isInteger(v));
const checkString: Check = (name, v) => {
  if (typeof v !== "string") throw new JsonableError(`${name} is not a string`);
};
const checkInt: Check = (name, v) => {
  if (!isInt(v)) throw new JsonableError(`${name} is not an integer`);
};
const checkBool: Check = (name, v) => {
  if (typeof v !== "boolean") throw new JsonableError(`${name} is not a boolean`);
};
const intIn =
  (values: number[]): Check =>
  (name, v) => {
    checkInt(name, v);
    if (!values.includes(Number(v))) throw new JsonableError(`Invalid ${name}`);
  };
const intRange =
  (low: number, high: number): Check =>
  (name, v) => {
    checkInt(name, v);
    if (Number(v) < low) throw new JsonableError(`${name} is too small`);
    if (Number(v) > high) throw new JsonableError(`${name} is too large`);
  };

/** check_dict (only the listed keys when `only`). */
function checkDict(name: string, value: unknown, keys: [string, Check][], only: boolean) {
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new JsonableError(`${name} is not a dict`);
  const dict = value as Record<string, unknown>;
  for (const [key, check] of keys) {
    if (!(key in dict)) throw new JsonableError(`${key} key is missing from ${name}`);
    check(`${name}["${key}"]`, dict[key]);
  }
  if (only) {
    const extra = Object.keys(dict).filter((k) => !keys.some(([key]) => key === k));
    if (extra.length) throw new JsonableError(`Unexpected arguments: ${extra.join(", ")}`);
  }
  return dict;
}

/** validate_poll_data / validate_todo_data: one of the widget's events, with its fields. */
export function validateWidgetData(
  widgetType: "poll" | "todo",
  data: unknown,
  isWidgetAuthor: boolean,
): void {
  const name = `${widgetType} data`;
  const type = checkDict(name, data, [["type", checkString]], false).type as string;
  const only = (keys: [string, Check][]) =>
    checkDict(name, data, [["type", checkString], ...keys], true);
  if (widgetType === "poll") {
    if (type === "vote")
      return void only([
        ["key", checkString],
        ["vote", intIn([1, -1])],
      ]);
    if (type === "question") {
      if (!isWidgetAuthor)
        throw new JsonableError("You can't edit a question unless you are the author.");
      return void only([["question", checkString]]);
    }
    if (type === "new_option")
      return void only([
        ["option", checkString],
        ["idx", intRange(0, MAX_IDX)],
      ]);
    throw new JsonableError(`Unknown type for poll data: ${type}`);
  }
  if (type === "new_task")
    return void only([
      ["key", intRange(0, MAX_IDX)],
      ["task", checkString],
      ["desc", checkString],
      ["completed", checkBool],
    ]);
  if (type === "strike") return void only([["key", checkString]]);
  if (type === "new_task_list_title") {
    if (!isWidgetAuthor)
      throw new JsonableError("You can't edit the task list title unless you are the author.");
    return void only([["title", checkString]]);
  }
  throw new JsonableError(`Unknown type for todo data: ${type}`);
}

/** The checks of process_submessage after access, in Zulip's order. */
export function checkSubmessage(
  message: { senderId: number },
  submessages: Related["submessages"],
  userId: number,
  content: string,
): void {
  checkSubmessageSender(message, submessages, userId);
  let data: unknown;
  try {
    data = JSON.parse(content);
  } catch {
    throw new JsonableError("Invalid json for submessage");
  }
  const widgetType = widgetTypeOf(submessages);
  if (widgetType === "poll" || widgetType === "todo")
    validateWidgetData(widgetType, data, message.senderId === userId);
}
