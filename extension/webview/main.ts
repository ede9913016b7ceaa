/**
 * The chat view's script. It keeps a copy of the chat state (the host sends a snapshot, then every action, and this
 * side applies them with the same `reduce`), redraws what changed, and sends what the person does to the host.
 */

import type { PermissionMode } from '../src/protocol';
import { PERMISSION_MODE_TRAITS, allowsEveryCall } from '../src/protocol';
import type { ChatState } from '../src/shared/chatModel';
import { reduce } from '../src/shared/chatModel';
import { escapeAction } from '../src/shared/keys';
import { sessionEntries } from '../src/shared/sessions';
import { todosFinished } from '../src/shared/toolResultView';
import { transcriptEntries } from '../src/shared/transcript';
import type { TranscriptEntry } from '../src/shared/transcript';
import { toolTiming } from '../src/shared/toolView';
import type { HostMessage, ViewMessage } from '../src/shared/messages';
import { changesBarElement, drawChangesBar, focusChangesBar } from './changesBar';
import { renderItem } from './components';
import { ComposerCompletion } from './composer';
import type { RenderContext } from './components';
import { clear, h } from './dom';
import { KeyboardFocus, OPEN_PANELS } from './keyboard';
import { drawMcpCards, mcpCardsElement } from './mcpCard';
import { drawEmptyState, drawProviderStatus, drawSidecarStatus } from './connection';
import { drawUsage, usageElement } from './contextUsage';
import { drawSandbox, sandboxElement } from './sandboxState';
import { drawSettingsProblems, settingsProblemsElement } from './settingsProblems';
import { SessionHistory } from './sessionHistory';
import { markSummarised } from './summarised';
import { TranscriptFollower } from './scrolling';
import { renderTodoItems } from './toolResults';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();

function post(message: ViewMessage): void {
  vscode.postMessage(message);
}

// -- layout -------------------------------------------------------------------------------------------------------

const sidecarStatus = h('div', { class: 'sidecar-status', role: 'status', 'data-state': 'stopped' });
const providerStatus = h('div', { class: 'provider-status' });
const sandboxState = sandboxElement();
const contextUsage = usageElement();
const mcpCards = mcpCardsElement();
const sessionSelect = h('select', { class: 'session-select', 'aria-label': 'Session' });
const newSessionButton = h('button', { class: 'secondary', title: 'Start a new session' }, 'New');
const deleteSessionButton = h('button', { class: 'secondary', title: 'Delete this session' }, 'Delete');
const history = new SessionHistory(post, () => composer.focus());
const modeSelect = h(
  'select',
  { class: 'mode-select', 'aria-label': 'Permission mode' },
  PERMISSION_MODE_TRAITS.map((t) => h('option', { value: t.mode, title: t.summary }, t.label)),
);
const bypassWarning = h(
  'div',
  { class: 'bypass-warning', role: 'alertdialog', 'aria-label': 'Switch to bypass permissions?', hidden: true },
  h('strong', {}, 'Bypass permissions? '),
  'Every tool call in this session will run without asking you: shell commands, file edits, deletions. ' +
    'Safety checks (for example writes into .git) still apply. Use it only in a throwaway environment.',
  h(
    'div',
    { class: 'card-actions' },
    h('button', { class: 'danger', onclick: () => confirmBypass(true) }, 'Switch to bypass'),
    h('button', { class: 'secondary', onclick: () => confirmBypass(false) }, 'Cancel'),
  ),
);
const settingsProblems = settingsProblemsElement();
const transcript = h('main', { class: 'transcript', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation' });
const jumpButton = h(
  'button',
  { class: 'jump-latest', title: 'Scroll to the newest message', hidden: true },
  'Jump to latest ↓',
);
const emptyState = h('div', { class: 'empty' });
const thinking = h('div', { class: 'thinking', role: 'status', hidden: true }, 'Thinking…');
// A <details>: the person may fold the list away (it keeps its state across redraws), its title still counting.
const todos = h('details', { class: 'todos', 'aria-label': 'Todo list', open: true, hidden: true });
const composer = h('textarea', {
  class: 'composer-input',
  rows: 3,
  placeholder: 'Ask toolgate to do something. Enter sends, Shift+Enter adds a line, Escape interrupts.',
  'aria-label': 'Message to the agent',
});
const completion = new ComposerCompletion(composer, post);
const sendButton = h('button', { class: 'primary send', title: 'Send (Enter)' }, 'Send');
const changesBar = changesBarElement(() => composer.focus());
const stopButton = h('button', { class: 'danger stop', title: 'Interrupt (Escape)', hidden: true }, 'Stop');

const app = document.getElementById('app') ?? document.body;
clear(app);
app.append(
  h(
    'header',
    { class: 'header' },
    // Compact: the state and the model in one line (the details in their tooltips), the pickers in one row.
    h('div', { class: 'status-row' }, sidecarStatus, providerStatus, sandboxState, contextUsage),
    // Two rows at any width (the header's height is the conversation's loss): the session, then how it runs.
    h(
      'div',
      { class: 'toolbar' },
      h('div', { class: 'toolbar-row' }, sessionSelect, history.button, newSessionButton, deleteSessionButton),
      h('div', { class: 'toolbar-row' }, modeSelect, completion.modelSelect),
    ),
    bypassWarning,
    settingsProblems,
    mcpCards,
  ),
  h('div', { class: 'transcript-area' }, transcript, thinking, jumpButton, history.view),
  todos,
  changesBar,
  h(
    'footer',
    { class: 'composer' },
    completion.list,
    completion.chips,
    composer,
    h('div', { class: 'composer-actions' }, completion.attachFileButton, stopButton, sendButton),
  ),
);

// -- state and drawing --------------------------------------------------------------------------------------------

let state: ChatState | undefined;
let drawn = new Map<string, TranscriptEntry & { element: HTMLElement }>();
let pendingDraw = false;
const context: RenderContext = {
  post,
  now: () => Date.now(),
  openTools: new Set(),
  decided: () => requestAnimationFrame(() => composer.focus()),
};

function scheduleDraw(): void {
  if (pendingDraw) return;
  pendingDraw = true;
  requestAnimationFrame(() => {
    pendingDraw = false;
    draw();
  });
}

function draw(): void {
  if (!state) return;
  drawHeader(state);
  drawSandbox(sandboxState, state.sandbox);
  drawUsage(contextUsage, state.usage);
  drawMcpCards(mcpCards, state.mcpCards, post, () => requestAnimationFrame(() => composer.focus()));
  drawTranscript(state);
  drawTodos(state);
  history.draw(state);
  drawChangesBar(changesBar, state.changes, post);
  const busy = state.busy;
  stopButton.hidden = !busy;
  sendButton.hidden = busy;
  document.body.dataset.busy = String(busy);
  thinking.hidden = !state.thinking;
  // Decided after everything that takes height from the transcript has been drawn (the todo list above all).
  follower.follow();
  keyboard.focusNewPendingCard();
}

const follower = new TranscriptFollower(transcript, jumpButton, () => composer.focus());
const keyboard = new KeyboardFocus(app, composer);

function drawHeader(current: ChatState): void {
  drawSidecarStatus(sidecarStatus, current.sidecar, post);
  completion.showModel(current.provider.model);
  drawProviderStatus(providerStatus, current, post);

  clear(sessionSelect);
  const entries = sessionEntries(current.sessions, current.sessionId);
  if (!current.sessionId) {
    sessionSelect.append(h('option', { value: '' }, entries.length > 0 ? 'New session (or pick one)' : 'New session'));
  }
  for (const entry of entries) sessionSelect.append(h('option', { value: entry.sessionId }, entry.label));
  sessionSelect.value = current.sessionId ?? '';
  sessionSelect.disabled = current.sidecar.state !== 'ready';
  newSessionButton.disabled = current.sidecar.state !== 'ready';
  deleteSessionButton.disabled = current.sidecar.state !== 'ready' || !current.sessionId || !current.sessionsAvailable;
  if (bypassWarning.hidden) modeSelect.value = current.mode;
  modeSelect.dataset.mode = current.mode;
  drawSettingsProblems(settingsProblems, current.settingsProblems, post);
}

function drawTranscript(current: ChatState): void {
  const next = new Map<string, TranscriptEntry & { element: HTMLElement }>();
  let previous: Element | null = null;
  const seen = new Map<string, number>();
  for (const { item, answered } of transcriptEntries(current.items)) {
    // Ids come from the sidecar; should one repeat, the occurrence number keeps each item its own element.
    const base = `${item.kind}:${item.id}`;
    const occurrence = (seen.get(base) ?? 0) + 1;
    seen.set(base, occurrence);
    const key = `${base}#${occurrence}`;
    const old = drawn.get(key);
    // Items are immutable: an unchanged object needs no redraw, which keeps typed feedback and open panels intact.
    const element = old && old.item === item && old.answered === answered ? old.element : renderItem(item, context, answered);
    if (old && old.element !== element) old.element.replaceWith(element);
    const expectedPosition: ChildNode | null = previous ? previous.nextSibling : transcript.firstChild;
    if (expectedPosition !== element) transcript.insertBefore(element, expectedPosition);
    next.set(key, { item, answered, element });
    markSummarised(element, next.size <= current.summarised);
    previous = element;
  }
  for (const [key, entry] of drawn) if (!next.has(key)) entry.element.remove();
  drawn = next;
  if (current.items.length === 0) {
    drawEmptyState(emptyState, current, post);
    if (!emptyState.isConnected) transcript.appendChild(emptyState);
  } else {
    emptyState.remove();
  }
}

function drawTodos(current: ChatState): void {
  clear(todos);
  // A finished list gives its room back to the conversation: its TodoWrite card in the transcript still shows it.
  todos.hidden = current.todos.length === 0 || todosFinished(current.todos);
  if (todos.hidden) return;
  const done = current.todos.filter((todo) => todo.status === 'completed').length;
  const now = current.todos.find((todo) => todo.status === 'in_progress');
  todos.append(
    h(
      'summary',
      { class: 'todos-title', title: 'Show or hide the todo list' },
      `Todos · ${done} of ${current.todos.length} done`,
      now ? h('span', { class: 'todos-current' }, ` · ${now.content}`) : null,
    ),
    renderTodoItems(current.todos),
  );
}

// Running tools' run times tick without redrawing their cards (a call waiting for the person does not tick).
setInterval(() => {
  for (const element of transcript.querySelectorAll<HTMLElement>('.tool-duration[data-running] .tool-ran')) {
    const duration = element.parentElement?.dataset ?? {};
    const started = Number(duration.started);
    const timing = { startedAt: started, finishedAt: null, waitedMs: Number(duration.waited) || 0, waitingSince: null };
    if (started) element.textContent = toolTiming(timing, Date.now()).ran;
  }
}, 1000);

// -- input --------------------------------------------------------------------------------------------------------

function send(): void {
  const text = composer.value;
  if (!text.trim() || state?.busy) return;
  post({ type: 'send', text, attachments: completion.take() });
  follower.followAgain(); // the person's own message, and the reply to it, are what they look at next
  composer.value = '';
  saveDraft();
}

function interrupt(): void {
  if (state?.busy) post({ type: 'interrupt' });
}

function confirmBypass(confirmed: boolean): void {
  bypassWarning.hidden = true;
  if (confirmed) post({ type: 'setMode', mode: 'bypassPermissions' });
  else if (state) modeSelect.value = state.mode;
  modeSelect.focus();
}

function saveDraft(): void {
  vscode.setState({ draft: composer.value });
  fitComposer();
}

/** The composer grows with what is typed, from three rows up to its CSS max-height (then it scrolls). */
function fitComposer(): void {
  composer.style.height = 'auto';
  const borders = composer.offsetHeight - composer.clientHeight;
  composer.style.height = `${composer.scrollHeight + borders}px`;
}

composer.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.altKey && !event.isComposing) {
    event.preventDefault();
    send();
  }
});
composer.addEventListener('input', saveDraft);
document.addEventListener('keydown', (event) => {
  if (event.altKey && event.shiftKey && event.code === 'KeyP') {
    if (keyboard.focusFirstPendingCard()) event.preventDefault();
    return;
  }
  // The changes bar's keybinding (toolgate.focusChangesBar), answered here too while the view has the keyboard.
  if (event.altKey && (event.ctrlKey || event.metaKey) && event.code === 'KeyC') {
    if (focusChangesBar(changesBar)) event.preventDefault();
    return;
  }
  if (event.key !== 'Escape' || event.isComposing) return;
  const focused = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  const openPanel = focused?.closest<HTMLElement>(OPEN_PANELS) ?? null;
  const action = escapeAction({
    focusInOpenPanel: openPanel !== null,
    anyPanelOpen: document.querySelector(OPEN_PANELS) !== null,
    focusInComposerOrTranscript:
      !focused || focused === document.body || focused === composer || transcript.contains(focused),
    busy: state?.busy ?? false,
  });
  if (action === 'nothing') return;
  event.preventDefault();
  event.stopPropagation();
  if (action === 'interrupt') interrupt();
  else if (openPanel) closePanel(openPanel);
});

function closePanel(panel: HTMLElement): void {
  if (panel === bypassWarning) confirmBypass(false);
  else keyboard.closeCardPanel(panel);
}

sendButton.addEventListener('click', send);
stopButton.addEventListener('click', interrupt);
newSessionButton.addEventListener('click', () => post({ type: 'newSession' }));
deleteSessionButton.addEventListener('click', () => {
  if (state?.sessionId) post({ type: 'deleteSession', sessionId: state.sessionId });
});
sessionSelect.addEventListener('change', () => {
  if (sessionSelect.value && sessionSelect.value !== state?.sessionId) post({ type: 'openSession', sessionId: sessionSelect.value });
});
modeSelect.addEventListener('change', () => {
  const mode = modeSelect.value as PermissionMode;
  if (allowsEveryCall(mode)) {
    bypassWarning.hidden = false;
    bypassWarning.querySelector<HTMLButtonElement>('button.secondary')?.focus();
    return;
  }
  bypassWarning.hidden = true;
  post({ type: 'setMode', mode });
});

window.addEventListener('message', (event: MessageEvent<HostMessage>) => {
  const message = event.data;
  if (completion.hostMessage(message)) return;
  if (message.type === 'focusComposer') {
    composer.focus();
    return;
  }
  if (message.type === 'focusPendingCard') {
    if (!keyboard.focusFirstPendingCard()) composer.focus();
    return;
  }
  if (message.type === 'focusChangesBar') {
    if (!focusChangesBar(changesBar)) composer.focus();
    return;
  }
  if (message.type === 'action') {
    if (message.action.type === 'snapshot') state = message.action.state;
    else if (state) state = reduce(state, message.action);
    scheduleDraw();
  }
});

const saved = vscode.getState() as { draft?: string } | undefined;
if (saved?.draft) {
  composer.value = saved.draft;
  requestAnimationFrame(fitComposer);
}
post({ type: 'ready' });
