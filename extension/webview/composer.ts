/**
 * The composer's completion list (`@` mentions from the host, `/` commands from the shared list), its attachment
 * chips and the model picker. One list serves both triggers: an ARIA listbox driven from the text box (which stays
 * focused, `aria-activedescendant` naming the selected row), arrows to move, Enter or Tab to choose, Escape to close.
 */

import type { Attachment, CompletionItem, Trigger } from '../src/shared/composer';
import { applyChoice, attachmentKey, attachmentLabel, findTrigger, isTypedOut, listKey, moveSelection, rankCandidates, slashCompletions } from '../src/shared/composer';
import type { AttachmentChip, HostMessage, ViewMessage } from '../src/shared/messages';
import { clear, h } from './dom';

const KIND_ICONS: Record<CompletionItem['kind'], string> = {
  file: '📄',
  folder: '📁',
  symbol: '◇',
  problems: '⚠',
  command: '/',
};

export class ComposerCompletion {
  readonly list = h('ul', { class: 'completion-list', role: 'listbox', id: 'composer-completions', 'aria-label': 'Suggestions', hidden: true });
  readonly chips = h('div', { class: 'composer-chips', role: 'list', 'aria-label': 'Attachments', hidden: true });
  readonly attachFileButton = h(
    'button',
    { class: 'secondary attach-file', title: "Attach the active editor's file (or type @ to pick one)" },
    '@ File',
  );
  readonly modelSelect = h('select', { class: 'model-select', 'aria-label': 'Model', title: 'Model for this chat' });
  private items: CompletionItem[] = [];
  private selected = 0;
  private trigger: Trigger | undefined;
  private requestId = 0;
  private attached: AttachmentChip[] = [];
  private modelsAsked = false;

  constructor(
    private readonly input: HTMLTextAreaElement,
    private readonly post: (message: ViewMessage) => void,
  ) {
    input.setAttribute('aria-controls', this.list.id);
    input.setAttribute('aria-autocomplete', 'list');
    input.setAttribute('aria-expanded', 'false');
    // Capture, so an open list gets Enter and Escape before the composer sends or the panel interrupts.
    input.addEventListener('keydown', (event) => this.keydown(event), { capture: true });
    input.addEventListener('input', () => this.update());
    input.addEventListener('click', () => this.update());
    input.addEventListener('blur', () => this.close());
    this.attachFileButton.addEventListener('click', () => this.post({ type: 'attachActiveFile' }));
    this.modelSelect.addEventListener('focus', () => this.askModels());
    this.modelSelect.addEventListener('mousedown', () => this.askModels());
    this.modelSelect.addEventListener('change', () => {
      if (this.modelSelect.value) this.post({ type: 'selectModel', model: this.modelSelect.value });
    });
  }

  /** What to send with the message; the chips are cleared. */
  take(): Attachment[] {
    const attachments = this.attached.map((entry) => entry.attachment);
    this.attached = [];
    this.drawChips();
    return attachments;
  }

  /** The header's model: the picker shows it (its list comes from the host when opened). */
  showModel(model: string): void {
    if (this.modelSelect.value === model && model) return;
    if (![...this.modelSelect.options].some((option) => option.value === model)) {
      this.modelSelect.append(h('option', { value: model }, model || 'default model'));
    }
    this.modelSelect.value = model;
  }

  /** The host's answers for the composer; false for any other message. */
  hostMessage(message: HostMessage): boolean {
    switch (message.type) {
      case 'completions':
        if (message.requestId === this.requestId && this.trigger?.char === '@') this.open(message.items);
        return true;
      case 'attach':
        this.attach(message.chip);
        this.input.focus();
        return true;
      case 'models':
        this.fillModels(message.current, message.models, message.problem);
        return true;
      default:
        return false;
    }
  }

  private askModels(): void {
    if (this.modelsAsked) return;
    this.modelsAsked = true;
    this.post({ type: 'listModels' });
  }

  private fillModels(current: string, models: string[], problem: string | null): void {
    clear(this.modelSelect);
    for (const model of models.includes(current) ? models : [current, ...models]) {
      this.modelSelect.append(h('option', { value: model }, model));
    }
    this.modelSelect.value = current;
    this.modelSelect.title = problem ?? 'Model for this chat';
    this.modelsAsked = models.length > 1; // a one-model answer (after a switch) is asked again next time
  }

  private attach(chip: AttachmentChip): void {
    const key = attachmentKey(chip.attachment);
    if (!this.attached.some((entry) => attachmentKey(entry.attachment) === key)) this.attached.push(chip);
    this.drawChips();
  }

  private drawChips(): void {
    clear(this.chips);
    this.chips.hidden = this.attached.length === 0;
    for (const entry of this.attached) {
      const remove = h('button', { class: 'chip-remove', 'aria-label': `Remove ${entry.chip}`, title: 'Remove' }, '×');
      remove.addEventListener('click', () => {
        this.attached = this.attached.filter((other) => other !== entry);
        this.drawChips();
        this.input.focus();
      });
      this.chips.append(h('span', { class: 'chip', role: 'listitem', title: entry.attachment.path ?? entry.chip }, entry.chip, remove));
    }
  }

  private update(): void {
    const trigger = findTrigger(this.input.value, this.input.selectionStart ?? this.input.value.length);
    this.trigger = trigger;
    if (!trigger) return this.close();
    if (trigger.char === '/') return this.open(rankCandidates(slashCompletions(), trigger.query));
    this.requestId += 1;
    this.post({ type: 'complete', requestId: this.requestId, query: trigger.query });
  }

  private open(items: CompletionItem[]): void {
    this.items = items;
    this.selected = 0;
    this.draw();
  }

  private close(): void {
    this.items = [];
    this.draw();
  }

  private draw(): void {
    clear(this.list);
    const open = this.items.length > 0;
    this.list.hidden = !open;
    this.input.setAttribute('aria-expanded', String(open));
    this.items.forEach((item, index) => {
      const row = h(
        'li',
        { class: 'completion', role: 'option', id: `completion-${index}`, 'aria-selected': String(index === this.selected), 'data-kind': item.kind },
        h('span', { class: 'completion-icon', 'aria-hidden': 'true' }, KIND_ICONS[item.kind]),
        h('span', { class: 'completion-label' }, item.label),
        item.detail ? h('span', { class: 'completion-detail' }, item.detail) : null,
      );
      // mousedown, not click: the text box must keep the focus (its blur closes the list).
      row.addEventListener('mousedown', (event) => {
        event.preventDefault();
        this.choose(index);
      });
      this.list.append(row);
    });
    if (open) {
      this.input.setAttribute('aria-activedescendant', `completion-${this.selected}`);
      this.list.querySelector('[aria-selected="true"]')?.scrollIntoView({ block: 'nearest' });
    } else {
      this.input.removeAttribute('aria-activedescendant');
    }
  }

  private keydown(event: KeyboardEvent): void {
    if (this.items.length === 0 || event.isComposing) return;
    const key = listKey(event.key, { shift: event.shiftKey, alt: event.altKey, ctrl: event.ctrlKey, meta: event.metaKey });
    if (!key) return;
    if (key === 'accept' && event.key === 'Enter' && this.trigger && isTypedOut(this.trigger, this.items[this.selected])) {
      this.close(); // and the composer sends it
      return;
    }
    event.preventDefault();
    event.stopImmediatePropagation();
    if (key === 'close') this.close();
    else if (key === 'accept') this.choose(this.selected);
    else {
      this.selected = moveSelection(this.selected, this.items.length, key);
      this.draw();
    }
  }

  private choose(index: number): void {
    const item = this.items[index];
    const trigger = this.trigger;
    if (!item || !trigger) return;
    const caret = this.input.selectionStart ?? this.input.value.length;
    const next = applyChoice(this.input.value, caret, trigger, item);
    this.input.value = next.text;
    this.input.setSelectionRange(next.caret, next.caret);
    if (item.attachment) {
      const named = item.kind === 'file' || item.kind === 'folder';
      this.attach({ attachment: item.attachment, chip: item.chip ?? (named ? item.label : attachmentLabel(item.attachment, item.label)) });
    }
    this.trigger = undefined;
    this.close();
    this.input.dispatchEvent(new Event('input')); // the draft is saved and the box refits, as for typed text
  }
}
