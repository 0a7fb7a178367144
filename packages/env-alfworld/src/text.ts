/** Fixed texts and list formatting of ALFWorld's text world (TextWorld's PDDL text generation). */

/** `display_list`: `nothing`, `x`, or `a, b, and c` (a comma before `and` even for two). */
export function displayList(items: readonly string[]): string {
  if (items.length === 0) return 'nothing';
  if (items.length === 1) return items[0] as string;
  return `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`;
}

/** The banner that starts every intro. */
export const WELCOME = '-= Welcome to TextWorld, ALFRED! =-';

/** Feedback of an unknown or inadmissible command. */
export const NOTHING_HAPPENS = 'Nothing happens.';

/** The `help` text of ALFWorld 0.4: 14 lines, the `move` line two columns short, one final newline. */
export const HELP_TEXT = [
  'Available commands:',
  '  look:                             look around your current location',
  '  inventory:                        check your current inventory',
  '  go to (receptacle):               move to a receptacle',
  '  open (receptacle):                open a receptacle',
  '  close (receptacle):               close a receptacle',
  '  take (object) from (receptacle):  take an object from a receptacle',
  '  move (object) to (receptacle):  place an object in or on a receptacle',
  '  examine (something):              examine a receptacle or an object',
  '  use (object):                     use an object',
  '  heat (object) with (receptacle):  heat an object using a receptacle',
  '  clean (object) with (receptacle): clean an object using a receptacle',
  '  cool (object) with (receptacle):  cool an object using a receptacle',
  '  slice (object) with (object):     slice an object using a sharp object',
  '',
].join('\n');

/** Python's `str.isspace()` code points, which `str.strip()` removes. */
const PY_SPACE = new Set<number>([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001,
  0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f,
  0x205f, 0x3000,
]);

/** Python's `str.strip()` with no argument (JavaScript's `trim` differs on a few characters). */
export function pythonStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && PY_SPACE.has(text.charCodeAt(start))) start++;
  while (end > start && PY_SPACE.has(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}
