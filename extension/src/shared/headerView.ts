/**
 * The chat header's one line in plain words ("Ready · Claude Sonnet 4.5 · sandboxed"): the model as a person names
 * it, from the id the provider uses. Pure: no DOM, no `vscode`.
 */

/** A date or snapshot suffix of a model id ("20250929", "2024-08-06", "latest"): not part of its name. */
const SNAPSHOT = /^(\d{8}|\d{4}-\d{2}-\d{2}|latest)$/;

/**
 * "claude-sonnet-4-5-20250929" → "Claude Sonnet 4.5"; "claude-3-5-haiku-latest" → "Claude 3.5 Haiku". Ids of other
 * families are shown as they are (a local model's id is its name), and so is an id this does not recognise.
 */
export function modelName(id: string): string {
  if (!/^claude-[a-z0-9-]+$/.test(id)) return id;
  const words: string[] = [];
  for (const part of id.split('-')) {
    if (SNAPSHOT.test(part)) continue;
    const previous = words[words.length - 1];
    // Version numbers are written with dashes in the id ("4-5") and with a dot in the name ("4.5").
    if (/^\d+$/.test(part) && previous !== undefined && /^\d+(\.\d+)*$/.test(previous) && part.length <= 2) {
      words[words.length - 1] = `${previous}.${part}`;
    } else {
      words.push(/^\d/.test(part) ? part : part[0]?.toUpperCase() + part.slice(1));
    }
  }
  return words.join(' ');
}
