/**
 * Text from a peer, made safe for a terminal. A replica's pod name, a check's reason, an error
 * message: anything a report carries may hold an ANSI escape (`ESC [ 2 J` clears the screen, `ESC ]`
 * sets the title or writes a link), a carriage return that overwrites a line already printed, or a
 * bidirectional override that shows text in an order it is not (Trojan Source). Every such
 * character is written as a visible escape (`\x1b`, `\u202e`) and the text is cut to a bound
 * first, so that nothing a peer says reaches the terminal as a command or as a flood.
 */
import { cutText } from '../util/cut-text';

/**
 * The characters a terminal acts on or that hide or reorder text: C0 controls (line breaks and tabs
 * included: every cell is one line), DEL, C1 controls (`\u009b` is a CSI of its own), the soft
 * hyphen, the Arabic letter mark, zero-width characters and directional marks, line and paragraph
 * separators, the bidirectional embeddings, overrides and isolates, the word joiners, the byte
 * order mark and the interlinear annotation characters.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;
/** {@link UNSAFE} but the C0 controls, which `JSON.stringify` escapes in strings itself (and which are whitespace outside them). */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;

/** `\xNN` below U+0100, `\uNNNN` above: an escape a person reads and a JSON parser accepts alike (for \u). */
function visibleEscape(character: string, json: boolean): string {
  const code = character.charCodeAt(0);
  return !json && code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` cut to `max` characters (marked `…`), every unsafe character written as a visible escape. */
export function terminalText(text: string, max: number): string {
  return cutText(text, max).replace(UNSAFE, (c) => visibleEscape(c, false));
}

/**
 * `value` as indented JSON that is safe to print: `JSON.stringify` escapes C0 controls inside
 * strings but not DEL, C1 controls or bidirectional overrides; these become `\uNNNN` escapes, which
 * keeps the JSON valid and equal once parsed (the characters can only stand inside strings).
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(UNSAFE_IN_JSON, (c) => visibleEscape(c, true));
}
