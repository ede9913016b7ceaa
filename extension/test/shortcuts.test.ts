/** Every keybinding the extension contributes is documented in both READMEs, as a person types it. */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

const read = (relative: string): string => readFileSync(fileURLToPath(new URL(relative, import.meta.url)), 'utf8');
const manifest = JSON.parse(read('../package.json')) as { contributes: { keybindings: { key: string }[] } };

/** "ctrl+alt+enter" → "Ctrl+Alt+Enter". */
function written(key: string): string {
  return key
    .split('+')
    .map((part) => (part.length === 1 ? part.toUpperCase() : part[0]?.toUpperCase() + part.slice(1)))
    .join('+');
}

describe('the keyboard shortcuts', () => {
  const keys = [...new Set(manifest.contributes.keybindings.map((binding) => written(binding.key)))];

  it('are all in the README and the extension README', () => {
    expect(keys).toContain('Alt+Shift+P'); // jumping to the waiting card is one of them
    for (const readme of ['../../README.md', '../README.md']) {
      const text = read(readme);
      expect(keys.filter((key) => !text.includes(`| ${key}`))).toEqual([]);
    }
  });
});
