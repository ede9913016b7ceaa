/**
 * Whether toolgate can work, as the panel shows it: the sidecar's state (with the fix and its buttons when it cannot
 * run), the model it talks to (and whether a key is missing), and, in an empty conversation, the steps that connect
 * a model when none can be reached yet.
 */

import type { ChatState, SidecarAction } from '../src/shared/chatModel';
import { modelName } from '../src/shared/headerView';
import type { ViewMessage } from '../src/shared/messages';
import { append, clear, h } from './dom';

type Post = (message: ViewMessage) => void;

const PROVIDER_NAMES: Record<string, string> = { anthropic: 'Anthropic', openai: 'OpenAI' };

const ACTION_LABELS: Record<SidecarAction, string> = {
  restartSidecar: 'Restart sidecar',
  showLog: 'Show log',
  openPythonSetting: 'Set Python path',
  installToolgate: 'Install toolgate',
  selectPython: 'Select Python',
};

/** The sidecar's line in the status row; when it cannot run, what to do about it and the buttons that do it. */
export function drawSidecarStatus(element: HTMLElement, status: ChatState['sidecar'], post: Post): void {
  element.dataset.state = status.state;
  clear(element);
  const label = {
    stopped: 'Sidecar stopped',
    starting: status.state === 'starting' ? status.detail : '',
    ready: 'Ready',
    restarting: status.state === 'restarting' ? status.detail : '',
    unavailable: status.state === 'unavailable' ? status.detail : '',
  }[status.state];
  // Ready: the versions are for the tooltip (and screen readers), not for the line.
  const detail = status.state === 'ready' ? ` · ${status.detail}` : '';
  const title = status.state === 'ready' ? `Sidecar ready${detail}` : label;
  element.append(
    h(
      'div',
      { class: 'status-line' },
      h('span', { class: 'dot', 'aria-hidden': 'true' }),
      h('span', { class: 'status-text', title }, label, detail ? h('span', { class: 'status-detail' }, detail) : null),
    ),
  );
  if (status.state === 'unavailable') {
    element.append(
      h('div', { class: 'status-fix' }, status.fix),
      h(
        'div',
        { class: 'card-actions' },
        status.actions.map((action) =>
          h('button', { class: 'secondary', onclick: () => post({ type: 'sidecarAction', action }) }, ACTION_LABELS[action]),
        ),
      ),
    );
  }
}

/** The model's line in the status row. */
export function drawProviderStatus(element: HTMLElement, current: ChatState, post: Post): void {
  const provider = current.provider;
  clear(element);
  element.title = [provider.provider, provider.model, provider.baseUrl, provider.message].filter(Boolean).join(' · ');
  // The line names the model as a person would; the provider, its address and the key are for the tooltip (and
  // screen readers), unless the key is missing: then the line says so, with the fix.
  append(element, [
    h('span', { class: 'model' }, provider.model ? modelName(provider.model) : provider.provider),
    h(
      'span',
      { class: 'status-detail' },
      h('span', { class: 'provider' }, ` · ${provider.provider}`),
      provider.model ? ` · ${provider.model}` : null,
      provider.baseUrl ? h('span', { class: 'base-url' }, ` · ${provider.baseUrl}`) : null,
      provider.hasApiKey || !needsKey(current) ? h('span', { class: 'key-ok' }, provider.hasApiKey ? ' · API key set' : ' · no key needed') : null,
    ),
    provider.hasApiKey || !needsKey(current)
      ? null
      : h(
          'span',
          { class: 'key-missing' },
          ' · no API key ',
          h('button', { class: 'link', onclick: () => post({ type: 'setApiKey' }) }, 'Set API Key'),
        ),
  ]);
}

/** The empty conversation: why nothing can happen yet and how to fix it, or what the panel is for. */
export function drawEmptyState(element: HTMLElement, current: ChatState, post: Post): void {
  clear(element);
  if (current.sidecar.state === 'unavailable') {
    element.append(h('p', {}, 'toolgate cannot work until its sidecar runs: see above for what to do.'));
  } else if (needsKey(current)) {
    const provider = PROVIDER_NAMES[current.provider.provider] ?? current.provider.provider;
    const variable = current.provider.provider === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY';
    element.append(
      h(
        'div',
        { class: 'setup' },
        h('h2', {}, 'Connect a model to start'),
        h('p', {}, `toolgate talks to ${provider} (the toolgate.provider setting) and has no API key for it yet. Any one of these will do:`),
        h(
          'ol',
          {},
          h(
            'li',
            {},
            `Store your ${provider} API key. It is kept in the editor's secret storage and never written to a file.`,
            h('br', {}),
            h('button', { class: 'primary', onclick: () => post({ type: 'setApiKey' }) }, 'Set API Key'),
          ),
          h(
            'li',
            {},
            'Choose another provider, model or base URL. A local OpenAI-compatible server (Ollama, vLLM, ' +
              'LM Studio) needs no key: set the provider to openai and the base URL to its address, for example ' +
              'http://localhost:11434/v1.',
            h('br', {}),
            h('button', { class: 'secondary', onclick: () => post({ type: 'openProviderSettings' }) }, 'Open Model Settings'),
          ),
          h('li', {}, `Start the editor with ${variable} set in its environment.`),
        ),
      ),
    );
  } else {
    element.append(
      h('p', {}, 'Ask for a change, a fix or an explanation. Every tool call shows here as a card;'),
      h('p', {}, 'calls that need your approval wait for it, and edits open as a diff you can change before accepting.'),
    );
  }
}

/** An OpenAI-compatible server at a base URL (Ollama, vLLM, the mock) may need no key at all. */
function needsKey(current: ChatState): boolean {
  const provider = current.provider;
  return !provider.hasApiKey && !(provider.provider === 'openai' && provider.baseUrl);
}
