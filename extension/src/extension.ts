/**
 * Activation: build the parts and connect them. No logic of its own lives here; see the modules it wires.
 */

import * as path from 'node:path';

import type * as vscode from 'vscode';

import { ApprovalBroker } from './approvals';
import { ChatViewProvider, CHAT_VIEW_ID } from './chatView';
import { ChatStore } from './chatStore';
import { Commands } from './commands';
import { ChatController } from './controller';
import { realTimers } from './host';
import { InterpreterWatch } from './interpreterWatch';
import { languageClientFactory } from './languageClient';
import { runProcess } from './processes';
import { ORIGINAL_SCHEME, PROPOSED_SCHEME, ProposalStore } from './proposals';
import { checkPython, choosePython, installCommand } from './python';
import { RestartPolicy } from './restartPolicy';
import { ReviewController } from './reviews';
import { RulesView } from './rulesView';
import type { Provider, ToolgateSettings } from './settings';
import {
  apiKeySecretName,
  apiKeyVariable,
  classifyChange,
  initializationOptions,
  PROVIDERS,
  providerConfiguration,
  readSettings,
  resolvePythonPath,
  sidecarEnvironment,
} from './settings';
import { reviewEditsFor } from './protocol';
import { initialState } from './shared/chatModel';
import { SidecarManager } from './sidecar';
import { SidecarClient } from './sidecarClient';
import * as api from './vscodeApi';

let manager: SidecarManager | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = new api.SidecarOutput(api.createOutputChannel('toolgate'));
  const log = (line: string): void => output.note(`[extension] ${line}`);
  const secrets = api.secretStore(context);
  const extensionVersion = String((context.extension.packageJSON as { version?: unknown }).version ?? '');
  const packageDir = path.join(context.extensionPath, 'python');

  let settings = loadSettings(log);
  // The keys stored with "toolgate: Set API Key", per provider; read again whenever one changes.
  let storedKeys: Partial<Record<Provider, string>> = {};
  const readKeys = async (): Promise<Partial<Record<Provider, string>>> => {
    const entries = await Promise.all(PROVIDERS.map(async (name) => [name, await secrets.get(apiKeySecretName(name))]));
    storedKeys = Object.fromEntries(entries.filter(([, key]) => key)) as Partial<Record<Provider, string>>;
    return storedKeys;
  };
  const hasStoredKey = (): boolean =>
    Boolean(storedKeys[settings.provider] ?? process.env[apiKeyVariable(settings.provider)]);

  // Nothing is awaited until every listener is registered: a settings change that arrives during activation must
  // not be missed. The stored keys are read afterwards.
  const store = new ChatStore(
    initialState(
      { provider: settings.provider, model: settings.model, baseUrl: settings.baseUrl, hasApiKey: hasStoredKey(), message: '' },
      settings.defaultMode,
    ),
  );
  const sidecar = new SidecarManager({
    checkPython: async () => {
      const workspace = api.firstWorkspaceFolder();
      const candidate = await choosePython({
        settingPath: resolvePythonPath(settings.pythonPath, workspace),
        pythonExtensionInterpreter: () => api.pythonExtensionInterpreter(workspace),
      });
      // The probe runs in the extension's folder so that a `toolgate` directory in the workspace cannot shadow it.
      return checkPython(candidate, runProcess, { packageDir, cwd: context.extensionPath });
    },
    launch: async (python) => {
      output.forgetRecent();
      return {
      // The command as configured (not the probe's sys.executable): a wrapper script or shim may set up the environment.
      command: python.candidate.command,
      // -P: do not put the working directory on sys.path (a workspace must not shadow the toolgate package).
      // --trust-workspace: this extension only runs in trusted windows (untrustedWorkspaces: false), so VS Code's
      // Workspace Trust has already vouched for the folder's own .toolgate settings files.
      args: ['-P', '-m', 'toolgate', 'serve', '--trust-workspace'],
      cwd: api.firstWorkspaceFolder(),
      env: sidecarEnvironment(settings, await readKeys(), process.env),
      initializationOptions: initializationOptions({ storageDir: (context.storageUri ?? context.globalStorageUri).fsPath }),
      };
    },
    createConnection: languageClientFactory(output),
    policy: new RestartPolicy(),
    timers: realTimers,
    recentOutput: () => output.recent(),
    log,
  });
  manager = sidecar;
  const client = new SidecarClient(() => sidecar.connection, sidecar);

  const chatView: ChatViewProvider = new ChatViewProvider(
    context.extensionUri,
    store,
    async (message) => chatController.handle(message),
    log,
  );
  const proposed = new ProposalStore(PROPOSED_SCHEME, false);
  const originals = new ProposalStore(ORIGINAL_SCHEME, true);
  const updateBadge = (): void => {
    const count = approvals.pendingCount + reviews.pendingCount;
    chatView.setBadge(count, count === 1 ? 'toolgate is waiting for your answer' : `toolgate is waiting for ${count} answers`);
  };
  const approvals: ApprovalBroker = new ApprovalBroker(
    store,
    chatView,
    api.notifier,
    {
      addRule: async (sessionId, rule, scope) => client.addRule(sessionId, rule, 'allow', scope),
      allows: async (sessionId, tool, input) =>
        (await client.checkPermission(sessionId, tool, input)).decision === 'allow',
    },
    () => updateBadge(),
  );
  const reviews: ReviewController = new ReviewController(
    proposed,
    originals,
    api.diffEditor,
    store,
    chatView,
    api.notifier,
    () => updateBadge(),
    api.firstWorkspaceFolder,
  );
  client.onApprovalRequest((params, token) => approvals.request(params, token));
  client.onDiffReview((params, token) => reviews.review(params, token));

  const commands: Commands = new Commands({
    notifier: api.notifier,
    manager: sidecar,
    client,
    get controller(): ChatController {
      return chatController;
    },
    reviews,
    secrets,
    provider: () => settings.provider,
    packageDir,
    workspaceFolder: api.firstWorkspaceFolder,
    currentSessionId: () => store.state.sessionId,
    vscode: api,
    showLog: () => output.show(true),
    rules: {
      show: () => rulesView.show(),
    },
  });
  const rulesView = new RulesView({
    notifier: api.notifier,
    client,
    session: () => chatController.sessionForRules(),
    openRulesFile: (files) => commands.openRulesFile(files),
    openFile: (file, at) => commands.openSettingsFile(file, at),
    onSettings: (settings) => chatController.showSettings(settings),
  });
  const chatController: ChatController = new ChatController({
    store,
    client,
    approvals,
    reviews,
    notifier: api.notifier,
    timers: realTimers,
    defaultMode: () => settings.defaultMode,
    reviewEdits: () => reviewEditsFor(settings.diffReview),
    providerConfiguration: () => providerConfiguration(settings),
    hasStoredKey,
    runAction: (action): Promise<void> => commands.sidecarAction(action),
    openSettingsProblem: (problem) =>
      problem.file ? commands.openSettingsFile(problem.file, problem) : Promise.resolve(),
  });
  const interpreterWatch = new InterpreterWatch({
    settingPath: () => resolvePythonPath(settings.pythonPath, api.firstWorkspaceFolder()),
    manager: sidecar,
    timers: realTimers,
    notify: (text) => store.dispatch({ type: 'notice', level: 'info', text }),
    log,
  });

  let lastProblem = '';
  sidecar.onDidChangeState((state) => {
    chatController.sidecarChanged(state);
    if (state.kind === 'unavailable' && state.python.message !== lastProblem) {
      lastProblem = state.python.message;
      void commands.notifyPythonProblem(state.python);
    } else if (state.kind === 'failed') {
      void api.notifier
        .show('error', `The toolgate sidecar is unavailable: ${state.reason}.`, 'Show Log', 'Restart Sidecar')
        .then((picked) => {
          if (picked === 'Show Log') output.show(true);
          if (picked === 'Restart Sidecar') void sidecar.restart();
        });
    } else if (state.kind === 'running') {
      lastProblem = '';
      if (state.python.toolgateVersion !== extensionVersion) {
        store.dispatch({
          type: 'notice',
          level: 'warning',
          text:
            `The toolgate package in this Python is version ${state.python.toolgateVersion}; this extension is ` +
            `${extensionVersion}. Install the matching package: ${installCommand(state.python.candidate.command, packageDir)}`,
        });
      }
    }
  });

  const applySettings = async (keyChanged: boolean): Promise<void> => {
    const before = settings;
    settings = loadSettings(log);
    if (keyChanged) await readKeys();
    const change = classifyChange(before, settings, keyChanged);
    if (change.restart) {
      log('settings changed: restarting the sidecar');
      store.dispatch({ type: 'provider', provider: chatController.localProviderStatus() });
      await sidecar.restart();
      return;
    }
    if (change.provider) await chatController.configureProvider();
    if (change.reviewEdits) await chatController.reviewEditsChanged();
  };

  context.subscriptions.push(
    output,
    chatView,
    approvals,
    reviews,
    api.registerChatView(CHAT_VIEW_ID, chatView),
    api.registerProposalFileSystem(proposed),
    api.registerProposalFileSystem(originals),
    interpreterWatch,
    api.onPythonInterpreterChanged((interpreter) => interpreterWatch.changed(interpreter)),
    api.onToolgateSettingsChanged(() => void applySettings(false)),
    api.onSecretsChanged(context, (key) => {
      if (PROVIDERS.some((name) => apiKeySecretName(name) === key)) void applySettings(true);
    }),
    api.registerCommand('toolgate.openChat', () => commands.openChat()),
    api.registerCommand('toolgate.newSession', () => commands.newSession()),
    api.registerCommand('toolgate.interrupt', () => commands.interrupt()),
    api.registerCommand('toolgate.setApiKey', () => commands.setApiKey()),
    api.registerCommand('toolgate.openPermissionRules', () => commands.openPermissionRules()),
    api.registerCommand('toolgate.restartSidecar', () => commands.restartSidecar()),
    api.registerCommand('toolgate.showLog', () => output.show(true)),
    api.registerCommand('toolgate.review.accept', (target) => commands.answerReview('accept', target)),
    api.registerCommand('toolgate.review.reject', (target) => commands.answerReview('reject', target)),
  );

  void readKeys().then(() => {
    if (sidecar.state.kind !== 'running') store.dispatch({ type: 'provider', provider: chatController.localProviderStatus() });
  });
  void sidecar.start();
}

export async function deactivate(): Promise<void> {
  // VS Code waits for this promise: the sidecar is asked to exit, and killed if it does not, before the host goes.
  const running = manager;
  manager = undefined;
  await running?.stop();
}

function loadSettings(log: (line: string) => void): ToolgateSettings {
  const { settings, problems } = readSettings(api.readToolgateSetting);
  for (const problem of problems) log(`settings: ${problem}`);
  if (problems.length > 0) void api.notifier.show('warning', `toolgate settings: ${problems.join(' ')}`);
  return settings;
}
