/**
 * Activation: build the parts in the order they depend on each other, and connect them. No logic of its own lives
 * here; see the modules it wires.
 */

import * as path from 'node:path';

import type * as vscode from 'vscode';

import { acceptEditsSwitch } from './review/acceptEdits';
import { ApprovalBroker, sidecarRuleSaver } from './review/approvals';
import { ChatViewProvider, CHAT_VIEW_ID } from './chat/chatView';
import { ChatStore } from './chat/chatStore';
import { ChangesBarController, isChangesMessage } from './checkpoints/changesBar';
import { HunkDecisions } from './review/hunkDecisions';
import { proposalEditor, registerReviewLenses } from './vscode/reviewLensVscode';
import { registerReviewNotes } from './vscode/reviewNotesVscode';
import { CheckpointController, isCheckpointMessage } from './checkpoints/checkpoints';
import { checkpointChanges, registerCheckpointContent, registerWithoutContent } from './vscode/checkpointsVscode';
import { Commands } from './commands';
import { serveCodeIntel } from './editor/codeIntel';
import { languageFeatures } from './vscode/languageFeaturesVscode';
import { ChatController } from './chat/controller';
import { ComposerHost, isComposerMessage } from './chat/composerHost';
import type { Manifest } from './chat/composerHost';
import { composerEditor } from './vscode/composerVscode';
import { reviewWaitingHooks } from './settings/hookReview';
import { Relay, realTimers } from './host';
import { InterpreterWatch } from './python/interpreterWatch';
import { languageClientFactory } from './vscode/languageClient';
import { runProcess } from './python/processes';
import { ORIGINAL_SCHEME, PROPOSED_SCHEME, ProposalStore } from './review/proposals';
import { LiveSettings } from './settings/liveSettings';
import { MCP_VIEW_ID, McpView, nodeSpec } from './mcp/mcpView';
import { RULES_VIEW_ID, RulesTree, placeOf, ruleOf, rulesNodeSpec } from './settings/rulesTree';
import type { McpCardAction } from './shared/mcpCard';
import { PendingBadge } from './review/pendingBadge';
import { SidecarPython } from './python/pythonEnvSidecar';
import { RestartPolicy } from './sidecar/restartPolicy';
import { ReviewController } from './review/reviews';
import { RulesView } from './settings/rulesView';
import { registerStandInDecorations } from './vscode/standInsVscode';
import { openFilesSetting, ProblemsAnswerer, waitSecondsSetting } from './editor/problems';
import { problemsHost } from './vscode/problemsVscode';
import { onWorkspaceFileChanged } from './vscode/fileChangesVscode';
import type { ToolgateSettings } from './settings/settings';
import {
  apiKeySecretName,
  initializationOptions,
  PROVIDERS,
  providerConfiguration,
  resolvePythonPath,
  sidecarEnvironment,
} from './settings/settings';
import { SettingsFileOpener } from './settings/settingsFileOpener';
import { reviewEditsFor } from './protocol';
import { initialState } from './shared/chatModel';
import type { ViewMessage } from './shared/messages';
import { SidecarManager } from './sidecar/sidecar';
import { SidecarClient } from './sidecar/sidecarClient';
import { SidecarNotices } from './sidecar/sidecarNotices';
import * as api from './vscode/vscodeApi';
import { SidecarOutput, createOutputChannel } from './vscode/vscodeOutput';

let manager: SidecarManager | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = new SidecarOutput(createOutputChannel('toolgate'));
  const log = (line: string): void => output.note(`[extension] ${line}`);
  const showLog = (): void => output.show(true);
  const secrets = api.secretStore(context);
  const extensionVersion = String((context.extension.packageJSON as { version?: unknown }).version ?? '');
  const packageDir = path.join(context.extensionPath, 'python');
  // Nothing is awaited until every listener is registered: a settings change that arrives during activation must
  // not be missed. The stored keys are read afterwards.
  const settings = new LiveSettings({ read: api.readToolgateSetting, secrets, notifier: api.notifier, env: process.env, log });
  const current = (): ToolgateSettings => settings.current;
  const sidecarPython = new SidecarPython({
    discovery: () => ({
      settingPath: resolvePythonPath(current().pythonPath, api.firstWorkspaceFolder()),
      pythonExtensionInterpreter: () => api.pythonExtensionInterpreter(api.firstWorkspaceFolder()),
    }),
    useInterpreterDirectly: () => current().useInterpreterDirectly,
    run: runProcess,
    extensionPath: context.extensionPath,
    env: {
      root: path.join(context.globalStorageUri.fsPath, 'python-env'),
      ...{ packageDir, extensionVersion, env: process.env, log, now: Date.now },
    },
    ui: { begin: api.progressNotification },
  });

  const store = new ChatStore(
    initialState(
      { provider: current().provider, model: current().model, baseUrl: current().baseUrl, hasApiKey: settings.hasKey(), message: '' },
      current().defaultMode,
    ),
  );
  const sidecar = new SidecarManager({
    checkPython: (progress) => sidecarPython.check(progress),
    launch: async (python) => {
      output.forgetRecent();
      return {
      // The command as configured (not the probe's sys.executable): a wrapper script or shim may set up the environment.
      command: python.environment?.python ?? python.candidate.command,
      // -P: do not put the working directory on sys.path (a workspace must not shadow the toolgate package).
      // --trust-workspace: this extension only runs in trusted windows (untrustedWorkspaces: false), so VS Code's
      // Workspace Trust has already vouched for the folder's own .toolgate settings files.
      args: ['-P', '-m', 'toolgate', 'serve', '--trust-workspace'],
      cwd: api.firstWorkspaceFolder(),
      env: sidecarEnvironment(current(), await settings.readKeys(), process.env),
      initializationOptions: initializationOptions(current(), { storageDir: (context.storageUri ?? context.globalStorageUri).fsPath }),
      };
    },
    createConnection: languageClientFactory(output),
    policy: new RestartPolicy(),
    timers: realTimers,
    recentOutput: () => output.recent(),
    log,
  });
  manager = sidecar;
  const restartSidecar = (): Promise<void> => sidecar.restart();
  const client = new SidecarClient(() => sidecar.connection, sidecar);

  // The chat view comes first (approvals and reviews need to know whether it is visible); its messages go to the
  // commands, which are built last: the relay is connected then.
  const viewMessages = new Relay<ViewMessage>();
  const dist = api.joinPath(context.extensionUri, 'dist');
  const webviewFiles = { root: dist, script: api.joinPath(dist, 'webview.js'), style: api.joinPath(dist, 'webview.css') };
  const chatView = new ChatViewProvider(webviewFiles, store, viewMessages.deliver, log);
  const badge = new PendingBadge(chatView);
  const proposed = new ProposalStore(PROPOSED_SCHEME, false);
  const originals = new ProposalStore(ORIGINAL_SCHEME, true);
  const acceptEdits = acceptEditsSwitch(client, (mode) => store.dispatch({ type: 'mode', mode }));
  const approvals = new ApprovalBroker(
    store,
    chatView,
    api.notifier,
    sidecarRuleSaver(client, acceptEdits),
    badge.update,
  );
  const reviews = new ReviewController(
    proposed,
    originals,
    api.diffEditor,
    store,
    chatView,
    api.notifier,
    badge.update,
    api.firstWorkspaceFolder,
    acceptEdits,
  );
  badge.track(approvals, reviews);
  client.onApprovalRequest((params, token) => approvals.request(params, token));
  client.onDiffReview((params, token) => reviews.review(params, token));
  const standIns = registerStandInDecorations();
  context.subscriptions.push(standIns);
  client.onStandIns((params) => standIns.update(params.paths));
  const problems = new ProblemsAnswerer(problemsHost(), {
    waitSeconds: () => waitSecondsSetting(api.readToolgateSetting('problems.waitSeconds')),
    openFiles: () => openFilesSetting(api.readToolgateSetting('problems.openFiles')),
  });
  context.subscriptions.push(problems);
  client.onEditorProblems((params, token) => problems.answer(params, token));
  serveCodeIntel(sidecar, languageFeatures);

  const controller = new ChatController({
    store,
    client,
    approvals,
    reviews,
    notifier: api.notifier,
    timers: realTimers,
    defaultMode: () => current().defaultMode,
    reviewEdits: () => reviewEditsFor(current().diffReview),
    saveDocument: api.saveDocument,
    providerConfiguration: () => providerConfiguration(current()),
    hasStoredKey: () => settings.hasKey(),
    restartSidecar,
    log,
  });
  const currentSessionId = (): string | null => store.state.sessionId;
  const files = new SettingsFileOpener({ notifier: api.notifier, client, currentSessionId, vscode: api, restartSidecar, showLog });
  const rulesView = new RulesView({
    notifier: api.notifier,
    client,
    session: () => controller.sessions.forRules(),
    openRulesFile: (reported) => files.openRulesFile(reported),
    openFile: (file, at) => files.openSettingsFile(file, at),
    onSettings: (answer) => {
      controller.sessions.showSettings(answer);
      rulesTree.show(answer);
    },
  });
  const rulesTree = new RulesTree({ client, session: () => controller.sessions.forRules() });
  store.onDidDispatch((action) => {
    if (action.type === 'sessionOpened' || action.type === 'settingsProblems') rulesTree.sessionChanged();
  });
  const mcpChat = { dispatch: (action: McpCardAction) => store.dispatch(action), presence: chatView };
  const mcp = new McpView({ client, session: () => controller.sessions.forRules(), notifier: api.notifier, openText: api.openReadOnlyText, chat: mcpChat });
  store.onDidDispatch((action) => mcp.chatChanged(action));
  const commands = new Commands({
    notifier: api.notifier,
    manager: sidecar,
    client,
    controller,
    reviews,
    secrets,
    provider: () => current().provider,
    packageDir,
    vscode: api,
    showLog,
    rules: rulesView,
    files,
    settingsProblems: () => store.state.settingsProblems,
    chat: chatView,
  });
  const checkpoints = new CheckpointController({
    store,
    client,
    notifier: api.notifier,
    changes: checkpointChanges,
    workspaceRoot: api.firstWorkspaceFolder,
    reloadSession: () => controller.sessions.reload(),
    log,
  });
  const changesBar = new ChangesBarController({
    store,
    client,
    changes: checkpointChanges,
    workspaceRoot: api.firstWorkspaceFolder,
    onFileChanged: (listener) => context.subscriptions.push(onWorkspaceFileChanged(listener)),
    log,
  });
  const composer = new ComposerHost({
    editor: composerEditor,
    client,
    store,
    notifier: api.notifier,
    post: (message) => chatView.tell(message),
    configuredModels: () => stringList(api.readToolgateSetting('models')),
    manifest: (context.extension.packageJSON as { contributes: Manifest }).contributes,
    mac: process.platform === 'darwin',
    commands: {
      compact: (focus) => controller.send(`/compact ${focus}`),
      clear: () => controller.newSession(),
      rewind: () => rewindLastPrompt(),
      rules: () => commands.openPermissionRules(),
      mcp: async () => void (await api.executeCommand(`${MCP_VIEW_ID}.focus`)),
    },
    showChat: () => commands.openChat(),
  });
  const rewindLastPrompt = async (): Promise<void> => {
    const last = [...store.state.items].reverse().find((item) => item.kind === 'user' && item.turn);
    if (last) return checkpoints.viewMessage({ type: 'restoreCheckpoint', itemId: last.id });
    store.dispatch({ type: 'notice', level: 'info', text: 'There is no message with a checkpoint to rewind to yet.' });
  };
  viewMessages.connect(async (message) => {
    if (message.type === 'send' && (await composer.slashCommand(message.text))) return;
    return message.type === 'mcpCard'
      ? mcp.cardChoice(message.name, message.choice)
      : isCheckpointMessage(message)
        ? checkpoints.viewMessage(message)
        : isComposerMessage(message)
          ? composer.viewMessage(message)
          : isChangesMessage(message)
            ? changesBar.viewMessage(message)
            : commands.viewMessage(message);
  });
  const notices = new SidecarNotices({
    notifier: api.notifier,
    store,
    extensionVersion,
    packageDir,
    notifyPythonProblem: (problem) => commands.notifyPythonProblem(problem),
    showLog,
    restart: restartSidecar,
  });
  const interpreterWatch = new InterpreterWatch({
    settingPath: () => resolvePythonPath(current().pythonPath, api.firstWorkspaceFolder()),
    manager: sidecar,
    timers: realTimers,
    notify: (text) => store.dispatch({ type: 'notice', level: 'info', text }),
    log,
  });

  sidecar.onDidChangeState((state) => {
    controller.sidecarChanged(state);
    notices.changed(state);
  });
  const reloadSettings = async (keyChanged: boolean): Promise<void> =>
    controller.settingsChanged(await settings.reload(keyChanged));

  context.subscriptions.push(
    output,
    chatView,
    approvals,
    reviews,
    api.registerChatView(CHAT_VIEW_ID, chatView),
    api.registerProposalFileSystem(proposed),
    api.registerProposalFileSystem(originals),
    registerCheckpointContent((ref) => checkpoints.fileText(ref)),
    registerWithoutContent((ref) => changesBar.withoutText(ref)),
    registerReviewLenses(new HunkDecisions(reviews, proposalEditor), (text) => void api.notifier.show('info', text)),
    registerReviewNotes((resource, line, text) => reviews.addNote(resource, line, text), (text) => void api.notifier.show('info', text)),
    interpreterWatch,
    api.onPythonInterpreterChanged((interpreter) => interpreterWatch.changed(interpreter)),
    api.onToolgateSettingsChanged(() => void reloadSettings(false)),
    api.onSecretsChanged(context, (key) => {
      if (PROVIDERS.some((name) => apiKeySecretName(name) === key)) void reloadSettings(true);
    }),
    api.registerCommand('toolgate.openChat', () => commands.openChat()),
    api.registerCommand('toolgate.focusPendingCard', () => commands.focusPendingCard()),
    api.registerCommand('toolgate.newSession', () => commands.newSession()),
    api.registerCommand('toolgate.focusChangesBar', async () => {
      await commands.openChat();
      chatView.focusChangesBar();
    }),
    api.registerCommand('toolgate.interrupt', () => commands.interrupt()),
    api.registerCommand('toolgate.setApiKey', () => commands.setApiKey()),
    api.registerCommand('toolgate.openPermissionRules', () => commands.openPermissionRules()),
    api.registerCommand('toolgate.addSelectionToChat', () => composer.attachActive(true)),
    api.registerCommand('toolgate.reviewHooks', () =>
      reviewWaitingHooks({
        client,
        notifier: api.notifier,
        session: () => controller.sessions.forRules(),
        refresh: () => controller.sessions.refreshSettings(),
      }),
    ),
    api.registerCommand('toolgate.restartSidecar', () => commands.restartSidecar()),
    api.registerCommand('toolgate.showLog', showLog),
    api.registerCommand('toolgate.rebuildPythonEnvironment', () => {
      sidecarPython.rebuildNext();
      return restartSidecar();
    }),
    mcp,
    api.registerTreeView(MCP_VIEW_ID, { ...mcp.tree(), spec: nodeSpec }, () => void mcp.shown()),
    api.registerTreeView(RULES_VIEW_ID, { ...rulesTree.tree(), spec: rulesNodeSpec }, () => rulesTree.shown()),
    api.registerCommand('toolgate.rules.add', () => rulesView.addRule()),
    api.registerCommand('toolgate.rules.refresh', () => rulesTree.refresh()),
    api.registerCommand('toolgate.rules.remove', async (target) => {
      const rule = ruleOf(target);
      if (rule) await rulesView.remove(rule);
    }),
    api.registerCommand('toolgate.rules.edit', async (target) => {
      const place = placeOf(target);
      if (place) await files.openSettingsFile(place.file, place);
    }),
    api.registerCommand('toolgate.mcp.refresh', () => mcp.refresh()),
    api.registerCommand('toolgate.mcp.openSettings', (where) => files.openMcpSettings(where === 'user' ? 'user' : 'workspace')),
    api.registerCommand('toolgate.mcp.approve', (target) => mcp.approve(target)),
    api.registerCommand('toolgate.mcp.restart', (target) => mcp.restart(target)),
    api.registerCommand('toolgate.mcp.revoke', (target) => mcp.revoke(target)),
    api.registerCommand('toolgate.mcp.showLog', (target) => mcp.showLog(target)),
    api.registerCommand('toolgate.review.accept', (target) => commands.answerReview('accept', target)),
    api.registerCommand('toolgate.review.reject', (target) => commands.answerReview('reject', target)),
  );

  void settings.readKeys().then(() => controller.keysRead(sidecar.state));
  void sidecar.start();
}

/** A setting that should be a list of strings (anything else in it is ignored). */
function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
}

export async function deactivate(): Promise<void> {
  // VS Code waits for this promise: the sidecar is asked to exit, and killed if it does not, before the host goes.
  const running = manager;
  manager = undefined;
  await running?.stop();
}
